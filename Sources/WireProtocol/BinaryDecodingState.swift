/// What all decoders of one binary message share: the borrowed bytes, the key table built so
/// far, and the end of the most recently completed container.
///
/// Decoding reads straight out of the caller's buffer, so the state is invalidated when the
/// top-level decode returns; a `Decodable` that kept a decoder and used it later gets an error,
/// never a read of freed memory.
final class BinaryDecodingState {
    // Hot fields are exempt from dynamic exclusivity checks: they are only mutated by this
    // class's own non-reentrant methods.
    private var bytes: UnsafeRawBufferPointer
    @exclusivity(unchecked) private var valid = true
    let limits: WireLimits
    private(set) var userInfo: [CodingUserInfoKey: Any]

    /// Interned keys in order of first appearance.
    @exclusivity(unchecked) private(set) var keyTable: [String] = []
    /// The offset of each key's literal; ascending, so a re-read literal is found by search.
    @exclusivity(unchecked) private var keyOffsets: [Int] = []

    /// The start and end of the last container that was read to its end, so the parent can
    /// continue after it without skipping it again.
    @exclusivity(unchecked) private var hintStart = -1
    @exclusivity(unchecked) private var hintEnd = -1

    /// An error met in a non-throwing `Decoder` method (`allKeys`, `contains`, `decodeNil`):
    /// the message is malformed, and this is reported instead of whatever the `Decodable`
    /// made of the empty answer it got.
    var deferredError: WireError?

    init(bytes: UnsafeRawBufferPointer, limits: WireLimits, userInfo: [CodingUserInfoKey: Any]) {
        self.bytes = bytes
        self.limits = limits
        self.userInfo = userInfo
        // No room reserved for keys: a message of a scalar (an event, an output) has none, and
        // the first key reserves it (`internKey`).
    }

    var byteCount: Int { bytes.count }

    func invalidate() { valid = false }

    /// Makes this state ready for another message (`WireCodingScratch`): its key tables emptied
    /// with their storage kept.
    func reset(bytes: UnsafeRawBufferPointer, userInfo: [CodingUserInfoKey: Any]) {
        self.bytes = bytes
        self.userInfo = userInfo
        valid = true
        // Emptied only when they hold something (a reused state is reset twice per message).
        if !keyTable.isEmpty { keyTable.removeAll(keepingCapacity: true) }
        if !keyOffsets.isEmpty { keyOffsets.removeAll(keepingCapacity: true) }
        hintStart = -1
        hintEnd = -1
        deferredError = nil
    }

    /// A reader at `offset`, provided the top-level decode is still running.
    @inline(__always)
    func reader(at offset: Int) throws(WireError) -> ByteReader {
        guard valid else {
            throw .malformed("decoder used after decoding finished", codingPath: "")
        }
        return ByteReader(bytes, offset: offset)
    }

    /// Keeps the first error met where it cannot be thrown.
    func `defer`(_ error: WireError) {
        if deferredError == nil { deferredError = error }
    }

    func noteEnd(start: Int, end: Int) {
        hintStart = start
        hintEnd = end
    }

    func knownEnd(of start: Int) -> Int? {
        hintStart == start ? hintEnd : nil
    }

    /// Reads a key reference and returns its index in `keyTable`. A reference is the varint
    /// `0` followed by a length-prefixed UTF-8 literal (a new key), or `n > 0` meaning the key
    /// defined by the `n`th literal, which must appear earlier in the message.
    func readKey(_ reader: inout ByteReader) throws(WireError) -> Int {
        let start = reader.offset
        let reference = try reader.readVarint("key reference")
        if reference != 0 {
            guard reference <= UInt64(keyTable.count), keyOffsets[Int(reference) - 1] < start else {
                throw .malformed("key reference \(reference) to a key not yet defined", codingPath: "")
            }
            return Int(reference) - 1
        }
        let length = try reader.readLength(limit: limits.maxFrameBytes, "key length")
        if let last = keyOffsets.last, start <= last {
            // Already seen (a container read twice or out of order): find its index.
            try reader.require(length, "key")
            reader.offset += length
            var low = 0
            var high = keyOffsets.count - 1
            while low <= high {
                let mid = (low + high) / 2
                if keyOffsets[mid] == start { return mid }
                if keyOffsets[mid] < start { low = mid + 1 } else { high = mid - 1 }
            }
            throw .malformed("key literal at offset \(start) was skipped", codingPath: "")
        }
        let key = try reader.readUTF8(length, "key")
        // Checked on capacity, not count: a state reset for another message keeps its storage.
        if keyTable.capacity == 0 {
            keyTable.reserveCapacity(16)
            keyOffsets.reserveCapacity(16)
        }
        keyTable.append(key)
        keyOffsets.append(start)
        return keyTable.count - 1
    }

    /// Moves `reader` past one value without decoding it, registering any keys inside.
    func skipValue(_ reader: inout ByteReader, depth: Int) throws(WireError) {
        guard depth < limits.maxDepth else { throw .nestingTooDeep(limit: limits.maxDepth) }
        let tag = try reader.readByte("value tag")
        switch BinaryTag(rawValue: tag) {
        case .null, .false, .true:
            return
        case .unsigned, .signed:
            _ = try reader.readVarint128("integer")
        case .float32:
            _ = try reader.readSlice(4, "Float")
        case .float64:
            _ = try reader.readSlice(8, "Double")
        case .string, .bytes:
            let length = try reader.readLength(limit: limits.maxFrameBytes, "string or bytes length")
            _ = try reader.readSlice(length, "string or bytes")
        case .keyed:
            let count = try reader.readLength(
                limit: limits.maxCollectionCount, minimumItemBytes: 2, "keyed container count")
            for _ in 0..<count {
                _ = try readKey(&reader)
                try skipValue(&reader, depth: depth + 1)
            }
        case .unkeyed:
            let count = try reader.readLength(limit: limits.maxCollectionCount, "unkeyed container count")
            for _ in 0..<count {
                try skipValue(&reader, depth: depth + 1)
            }
        case nil:
            throw .malformed("unknown type tag 0x\(String(tag, radix: 16))", codingPath: "")
        }
    }

    /// The offset just past the value at `start`.
    func end(ofValueAt start: Int, depth: Int) throws(WireError) -> Int {
        if let end = knownEnd(of: start) { return end }
        var reader = try reader(at: start)
        try skipValue(&reader, depth: depth)
        return reader.offset
    }
}
