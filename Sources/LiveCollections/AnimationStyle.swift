/// How a client should animate a change, from most to least precise.
public enum AnimationStyle: String, Sendable, CaseIterable, Comparable {
    /// Apply the delta: animated and precise.
    case preciseAnimations
    /// Reload the affected sections: animated but not precise.
    case reloadSections
    /// Reload everything: no animation.
    case reloadData

    @usableFromInline var coarseness: Int {
        switch self {
        case .preciseAnimations: 0
        case .reloadSections: 1
        case .reloadData: 2
        }
    }

    /// Ordered from most precise (smallest) to least.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.coarseness < rhs.coarseness }
}

/// Lets a caller downgrade the style chosen for a given delta (it can never upgrade one:
/// the coarser of the proposed and the preferred style wins).
public protocol AnimationStyleDelegate: Sendable {
    /// A flat collection's items.
    func preferredItemAnimationStyle(for delta: IndexDelta, proposed: AnimationStyle) -> AnimationStyle
    /// A sectioned collection's sections.
    func preferredSectionAnimationStyle(for delta: IndexDelta, proposed: AnimationStyle) -> AnimationStyle
    /// A sectioned collection's items.
    func preferredItemAnimationStyle(for delta: IndexPathDelta, proposed: AnimationStyle) -> AnimationStyle
}

extension AnimationStyleDelegate {
    /// By default the proposed style stands.
    public func preferredItemAnimationStyle(for delta: IndexDelta, proposed: AnimationStyle) -> AnimationStyle {
        proposed
    }
    /// By default the proposed style stands.
    public func preferredSectionAnimationStyle(for delta: IndexDelta, proposed: AnimationStyle) -> AnimationStyle {
        proposed
    }
    /// By default the proposed style stands.
    public func preferredItemAnimationStyle(for delta: IndexPathDelta, proposed: AnimationStyle) -> AnimationStyle {
        proposed
    }
}

/// LiveCollections' threshold rules, and the delegate that may downgrade their verdict.
public struct AnimationPolicy: Sendable {
    /// Above this many items on either side the delta is not computed.
    public var dataCountAnimationThreshold: Int
    /// Above this many changes the delta is not animated precisely.
    public var deltaCountAnimationThreshold: Int
    /// May downgrade the style the thresholds chose; nil keeps it.
    public var delegate: (any AnimationStyleDelegate)?
    /// Whether a diff works out the exact delta also where the thresholds keep it from the
    /// answer (over `dataCountAnimationThreshold`, or items behind coarse sections), as
    /// `AnimatedDelta.exact` and `AnimatedSectionedDelta.exact`. A session's holder sets it: a
    /// live window of a few rows is projected from that delta, where without it every window
    /// of a long list would be sent its rows again on every whole update.
    @usableFromInline package var keepsExactDelta = false

    /// LiveCollections' default for both thresholds.
    public static let defaultThreshold = 10_000

    /// Rules with LiveCollections' defaults unless told otherwise.
    public init(
        dataCountAnimationThreshold: Int = AnimationPolicy.defaultThreshold,
        deltaCountAnimationThreshold: Int = AnimationPolicy.defaultThreshold,
        delegate: (any AnimationStyleDelegate)? = nil
    ) {
        self.dataCountAnimationThreshold = dataCountAnimationThreshold
        self.deltaCountAnimationThreshold = deltaCountAnimationThreshold
        self.delegate = delegate
    }

    @usableFromInline
    func exceedsDataCount(_ oldCount: Int, _ newCount: Int) -> Bool {
        oldCount > dataCountAnimationThreshold || newCount > dataCountAnimationThreshold
    }

    /// The threshold verdict for a computed delta, before the delegate.
    @usableFromInline
    func proposedStyle(changeCount: Int, coarse: AnimationStyle) -> AnimationStyle {
        changeCount > deltaCountAnimationThreshold ? coarse : .preciseAnimations
    }
}
