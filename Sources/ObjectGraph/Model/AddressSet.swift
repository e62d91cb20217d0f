/// A set of object addresses, for the members of a large to-many relationship (see
/// `ModelStorage.memberAddresses`).
///
/// `Set<UnsafeRawPointer>` hashes each address with SipHash, which took 450 instructions an insert
/// and as many a lookup: 2% of inserting snippets into folders and tags. Addresses need no defence
/// against chosen keys (they are the allocator's), so they are spread by one multiplication
/// (`fibonacciSlot`) over a table of a power of two slots, at most half full, probed linearly.
struct AddressSet {
    /// Zero for an empty slot: no object lives at address zero.
    private var slots: [UInt]
    private(set) var count = 0
    /// 64 minus the table's size as a power of two: the slot is the top bits of the product.
    private var shift: UInt64

    init(minimumCapacity: Int = 0) {
        var bits = 3
        while 1 << bits < 2 * minimumCapacity { bits += 1 }
        slots = Array(repeating: 0, count: 1 << bits)
        shift = UInt64(64 - bits)
    }

    func contains(_ address: UnsafeRawPointer) -> Bool {
        let wanted = UInt(bitPattern: address)
        var slot = self.slot(of: wanted)
        while true {
            let held = slots[slot]
            if held == wanted { return true }
            if held == 0 { return false }
            slot = (slot + 1) & (slots.count - 1)
        }
    }

    mutating func insert(_ address: UnsafeRawPointer) {
        if 2 * (count + 1) > slots.count { grow() }
        if place(UInt(bitPattern: address)) { count += 1 }
    }

    /// Puts `address` in its slot; false when it was there already.
    private mutating func place(_ address: UInt) -> Bool {
        var slot = self.slot(of: address)
        while slots[slot] != 0 {
            if slots[slot] == address { return false }
            slot = (slot + 1) & (slots.count - 1)
        }
        slots[slot] = address
        return true
    }

    private func slot(of address: UInt) -> Int {
        fibonacciSlot(of: UInt64(address), shift: shift)
    }

    private mutating func grow() {
        let held = slots
        slots = Array(repeating: 0, count: held.count * 2)
        shift -= 1
        for address in held where address != 0 { _ = place(address) }
    }
}

/// The slot of `key` in a table of `1 << (64 - shift)` slots: the top bits of the key times 2⁶⁴ / φ
/// (Fibonacci hashing), which spreads keys that differ in any bit. For tables of keys no one chooses
/// to collide (addresses, a schema's case names), where SipHash's defence costs more than the lookup.
@inline(__always) func fibonacciSlot(of key: UInt64, shift: UInt64) -> Int {
    Int(truncatingIfNeeded: (key &* fibonacciMultiplier) >> shift)
}

/// 2⁶⁴ / φ, rounded to odd.
let fibonacciMultiplier: UInt64 = 0x9E37_79B9_7F4A_7C15
