/// Values by slot index, for the few slots of one model that have one: a list searched in order, not a
/// dictionary. A model has a few relationships, and the dictionaries these replaced (a new row's
/// references to models without a key, a saved model's committed to-many keys) were allocated, hashed
/// into and freed for every snippet saved: about 550 instructions each; a storage's member addresses
/// by slot hashed the slot on every link of a member (three times, as a link reads, takes and puts
/// back its slot's set).
struct SlotMap<Value>: Sequence {
    private var entries: [(slot: Int, value: Value)] = []

    var isEmpty: Bool { entries.isEmpty }

    mutating func removeAll() { entries.removeAll() }

    subscript(slot: Int) -> Value? {
        get { entries.first { $0.slot == slot }?.value }
        set {
            if let position = entries.firstIndex(where: { $0.slot == slot }) {
                if let newValue { entries[position].value = newValue } else { entries.remove(at: position) }
            } else if let newValue {
                entries.append((slot, newValue))
            }
        }
    }

    /// Takes the slot's value out, so that the caller changes it without a copy.
    mutating func removeValue(forSlot slot: Int) -> Value? {
        guard let position = entries.firstIndex(where: { $0.slot == slot }) else { return nil }
        return entries.remove(at: position).value
    }

    func makeIterator() -> IndexingIterator<[(slot: Int, value: Value)]> {
        entries.makeIterator()
    }
}
