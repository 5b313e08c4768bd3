/// `value` as `U`, for code that has proved `T` and `U` are one type by comparing their
/// metatypes. In runtime code that is not specialised for the user's types, `as?` is a dynamic
/// cast (a search of the type's metadata and conformances); a metatype comparison and this
/// reinterpretation cost next to nothing. Calling it with two different types is undefined
/// behaviour.
@inline(__always)
func reinterpret<T, U>(_ value: T, as _: U.Type) -> U {
    withUnsafePointer(to: value) { UnsafeRawPointer($0).assumingMemoryBound(to: U.self).pointee }
}

/// `==` for two values of `T` when `T` is `Equatable`, `nil` when it is not.
///
/// The runtime compares states (`RuntimeOptions.renderOnlyIfStateChanged`) and a remote child's
/// props (to send nothing when they did not change) from code that does not know whether the
/// type is `Equatable`. Asking the type once is cheap; casting each value to `any Equatable`
/// boxes it (an allocation) and casts it dynamically on every comparison.
package func equality<T>(of type: T.Type) -> ((T, T) -> Bool)? {
    guard let equatable = type as? any Equatable.Type else { return nil }
    func open<E: Equatable>(_: E.Type) -> (T, T) -> Bool {
        // `E` is `T` (the cast above proved it): the values are reinterpreted, not converted.
        { lhs, rhs in reinterpret(lhs, as: E.self) == reinterpret(rhs, as: E.self) }
    }
    return open(equatable)
}
