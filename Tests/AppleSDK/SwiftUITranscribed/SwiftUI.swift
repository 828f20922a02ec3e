// The part of SwiftUI (and of Combine, which SwiftUI exports) that the docs' SwiftUI snippets
// use, transcribed from Apple's documentation (developer.apple.com/documentation/swiftui): the
// same names, labels, closure types and `@MainActor`, so that compiling the snippets on Linux
// fails where they would not compile against SwiftUI. Nothing here draws.
@_exported import Foundation  // as the real framework does

// MARK: - Combine

/// Combine's publisher that an `ObservableObject` sends before it changes.
public final class ObservableObjectPublisher: @unchecked Sendable {  // holds nothing
    public init() {}
    public func send() {}
}

/// Combine's type of object with a publisher that emits before the object changes.
public protocol ObservableObject: AnyObject {
    associatedtype ObjectWillChangePublisher = ObservableObjectPublisher
    var objectWillChange: Self.ObjectWillChangePublisher { get }
}

// MARK: - SwiftUI

/// A type that represents part of an app's user interface.
@MainActor @preconcurrency
public protocol View {
    associatedtype Body: View
    @ViewBuilder @MainActor @preconcurrency var body: Self.Body { get }
}

extension Never: View {
    public typealias Body = Never
    public var body: Never { fatalError("a view without a body") }
}

/// A custom parameter attribute that constructs views from closures.
@resultBuilder
public struct ViewBuilder {
    public static func buildBlock() -> EmptyView { EmptyView() }
    public static func buildBlock<Content: View>(_ content: Content) -> Content { content }
}

public struct EmptyView: View {
    nonisolated public init() {}
    public var body: Never { fatalError("a view without a body") }
}

/// A view that displays one or more lines of read-only text.
public struct Text: View {
    public init<S: StringProtocol>(_ content: S) {}
    public var body: Never { fatalError("a view without a body") }
}

/// A structure that computes views on demand from an underlying collection of identified data.
public struct ForEach<Data: RandomAccessCollection, ID: Hashable, Content> {
    public var data: Data
    public var content: (Data.Element) -> Content
}

extension ForEach: View where Content: View {
    public var body: Never { fatalError("a view without a body") }
}

/// A container that presents rows of data arranged in a single column.
public struct List<SelectionValue: Hashable, Content: View>: View {
    let content: Content
    public var body: Never { fatalError("a view without a body") }
}

extension List where SelectionValue == Never {
    /// Creates a list that identifies its rows by the key path to a property of the data.
    public init<Data, ID, RowContent>(
        _ data: Data, id: KeyPath<Data.Element, ID>, @ViewBuilder rowContent: @escaping (Data.Element) -> RowContent
    ) where Content == ForEach<Data, ID, RowContent>, Data: RandomAccessCollection, ID: Hashable, RowContent: View {
        content = ForEach(data: data, content: rowContent)
    }
}

/// A view with an asynchronous task to perform before it appears.
public struct _TaskView<Content: View>: View {
    let content: Content
    public var body: Never { fatalError("a view without a body") }
}

extension View {
    /// Adds an asynchronous task to perform before this view appears; SwiftUI cancels it when
    /// the view disappears.
    public func task(priority: TaskPriority = .userInitiated, @_inheritActorContext _ action: @escaping @Sendable () async -> Void) -> some View {
        _TaskView(content: self)
    }
}

/// Types whose stored values SwiftUI updates before drawing a view (`@State`, `@StateObject`).
public protocol DynamicProperty {}

/// A property wrapper type that instantiates an observable object.
@propertyWrapper
public struct StateObject<ObjectType: ObservableObject>: DynamicProperty {
    let thunk: () -> ObjectType
    public init(wrappedValue thunk: @autoclosure @escaping () -> ObjectType) { self.thunk = thunk }
    @MainActor public var wrappedValue: ObjectType { thunk() }
}

/// A property wrapper type that can read and write a value managed by SwiftUI.
@propertyWrapper
public struct State<Value>: DynamicProperty {
    var value: Value
    public init(wrappedValue value: Value) { self.value = value }
    public var wrappedValue: Value {
        get { value }
        nonmutating set {}
    }
}
