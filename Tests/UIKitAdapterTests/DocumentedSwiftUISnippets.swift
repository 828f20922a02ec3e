import Foundation
import LiveDeltaKit
import SwiftUITranscribed

// The docs' SwiftUI snippet, compiled against SwiftUI's transcribed declarations (see
// DocumentedUIKitSnippets.swift for how the docs are checked against these).

// On Apple platforms LiveList is an ObservableObject (LiveList.swift, under Combine); Linux has
// no Combine, so the transcription's protocol is adopted here the same way.
extension LiveList: ObservableObject {
    public nonisolated var objectWillChange: ObservableObjectPublisher { ObservableObjectPublisher() }
}

enum SwiftUIFeed {
    // snippet: swiftui-list
    struct FeedView: View {
        @StateObject var list = LiveList<Film>()

        var body: some View {
            List(list.items, id: \.id) { film in Text(film.title) }
                .task { _ = try? await list.follow("feed-42", with: LiveDeltaClient(baseURL: URL(string: "https://deltas.example.com")!)) }
        }
    }
    // end
}
