package com.livedelta.client;

/**
 * What a list view is told of a change, shaped as AndroidX's
 * {@code androidx.recyclerview.widget.ListUpdateCallback}, so that
 * {@code new AdapterListUpdateCallback(adapter)} plugs in with a one-line lambda each, or a
 * class that implements both.
 */
public interface ListUpdateCallback {
    void onInserted(int position, int count);

    void onRemoved(int position, int count);

    void onMoved(int fromPosition, int toPosition);

    /** {@code payload}: the changed fields ({@code {"set": {...}, "removed": [...]}}) where the session sends them, else null. */
    void onChanged(int position, int count, Object payload);
}
