import Foundation

extension UUID {
    /// The same text as `uuidString` ("E621E1F8-C36C-495A-93FC-0C247A3E6E5F"), written here from a
    /// table of hex digits. swift-foundation's `uuidString` goes through C's `snprintf` on Linux, and a
    /// list page writes some three hundred ids (its rows, their tag chips, the sidebar's and the filter
    /// form's folders and tags): 3% of the server's time under load went to formatting them.
    var idString: String {
        String(unsafeUninitializedCapacity: 36) { text in
            withUnsafeBytes(of: uuid) { bytes in
                var position = 0
                for (index, byte) in bytes.enumerated() {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        text[position] = UInt8(ascii: "-")
                        position += 1
                    }
                    text[position] = UUID.hexDigits[Int(byte >> 4)]
                    text[position + 1] = UUID.hexDigits[Int(byte & 0x0F)]
                    position += 2
                }
                return position
            }
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)
}
