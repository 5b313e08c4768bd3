import Testing
import ZeroMQ

/// Z85 text encoding and CURVE key handling.
@Suite struct KeyEncodingTests {
    @Test func z85MatchesTheRFCTestVector() throws {
        let bytes: [UInt8] = [0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B]
        #expect(try Z85.encode(bytes) == "HelloWorld")
        #expect(try Z85.decode("HelloWorld") == bytes)
    }

    @Test func z85RoundTripsArbitraryBytes() throws {
        var generator = SystemRandomNumberGenerator()
        for length in stride(from: 0, through: 64, by: 4) {
            let bytes = (0..<length).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
            #expect(try Z85.decode(Z85.encode(bytes)) == bytes)
        }
    }

    @Test func z85RejectsBadInput() {
        #expect(throws: Z85.Error.byteCountNotMultipleOfFour(3)) { try Z85.encode([1, 2, 3]) }
        #expect(throws: Z85.Error.lengthNotMultipleOfFive(4)) { try Z85.decode("abcd") }
        #expect(throws: Z85.Error.invalidCharacter(offset: 3)) { try Z85.decode("abc~e") }
        #expect(throws: Z85.Error.invalidCharacter(offset: 0)) { try Z85.decode(" bcde") }
        // Valid characters, but 85^5 - 1 does not fit in 32 bits.
        #expect(throws: Z85.Error.invalidGroup) { try Z85.decode("#####") }
    }

    @Test func curveKeyValidatesItsLength() {
        #expect(throws: CurveKey.Error.invalidByteCount(31)) { try CurveKey(bytes: [UInt8](repeating: 1, count: 31)) }
        #expect(throws: CurveKey.Error.invalidZ85(.lengthNotMultipleOfFive(3))) { try CurveKey(z85: "abc") }
        #expect(throws: CurveKey.Error.invalidByteCount(8)) { try CurveKey(z85: "HelloWorld") }
    }

    @Test(.enabled(if: ZMQLibrary.hasCurve)) func publicKeyIsDerivedFromTheSecretKey() throws {
        let generated = try CurveKeyPair.generate()
        #expect(generated.publicKey != generated.secretKey)
        let derived = try CurveKeyPair(secretKey: generated.secretKey)
        #expect(derived == generated)

        let reparsed = try CurveKey(z85: generated.publicKey.z85)
        #expect(reparsed == generated.publicKey)
        #expect(generated.publicKey.z85.count == 40)
        #expect(!String(describing: generated.secretKey).contains(generated.secretKey.z85))
    }
}
