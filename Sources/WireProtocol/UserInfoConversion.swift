/// Converts a codec's `userInfo` to the type `Encoder` and `Decoder` hand out.
///
/// `[CodingUserInfoKey: any Sendable]` to `[CodingUserInfoKey: Any]` is not free: the runtime
/// walks the dictionary and builds a new one (`_dictionaryUpCast`, an allocation and a hash per
/// entry, about 1,300 instructions for one entry). The binary coders therefore convert only when
/// a value reads `userInfo` (a `Sink` does; an `Int` event or output never does), and at most once
/// per message.
enum UserInfoConversion {
    static func toAny(_ userInfo: [CodingUserInfoKey: any Sendable]) -> [CodingUserInfoKey: Any] {
        userInfo.isEmpty ? [:] : userInfo as [CodingUserInfoKey: Any]
    }
}
