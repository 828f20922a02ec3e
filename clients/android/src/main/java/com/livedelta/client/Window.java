package com.livedelta.client;

import java.io.UnsupportedEncodingException;
import java.net.URLEncoder;

/**
 * The rows of a long flat session to read or follow: {@code limit} rows from an offset, or after
 * or before an item (by id), with {@code overscan} rows more on each side (see
 * docs/live-sessions.md). Immutable.
 */
public final class Window {
    private final String placement;
    private final Object at;
    private final int limit;
    private final int overscan;

    private Window(String placement, Object at, int limit, int overscan) {
        if (limit < 1) throw new IllegalArgumentException("a window needs a limit of 1 row or more");
        if (overscan < 0) throw new IllegalArgumentException("overscan is a number of rows, 0 or more");
        this.placement = placement;
        this.at = at;
        this.limit = limit;
        this.overscan = overscan;
    }

    /** {@code limit} rows from row {@code offset} (0 is the first); the window stays there. */
    public static Window offset(int offset, int limit) {
        if (offset < 0) throw new IllegalArgumentException("offset is a row, 0 or more");
        return new Window("offset", (long) offset, limit, 0);
    }

    /** The {@code limit} rows after the item with id {@code id}; the window goes with the item. */
    public static Window after(Object id, int limit) {
        return new Window("after", id, limit, 0);
    }

    /** The {@code limit} rows before the item with id {@code id} (scrolling up). */
    public static Window before(Object id, int limit) {
        return new Window("before", id, limit, 0);
    }

    /** This window with {@code rows} more on each side. */
    public Window overscan(int rows) {
        return new Window(placement, at, limit, rows);
    }

    /** The query parameters that ask for it, each after an {@code &}; ids go as JSON. */
    String query() {
        try {
            String value = placement.equals("offset") ? String.valueOf(at) : URLEncoder.encode(Json.write(at), "UTF-8");
            return "&limit=" + limit + "&" + placement + "=" + value + (overscan > 0 ? "&overscan=" + overscan : "");
        } catch (UnsupportedEncodingException impossible) {
            throw new IllegalStateException(impossible);
        }
    }

    @Override
    public boolean equals(Object other) {
        if (!(other instanceof Window)) return false;
        Window window = (Window) other;
        return placement.equals(window.placement) && java.util.Objects.equals(at, window.at) && limit == window.limit && overscan == window.overscan;
    }

    @Override
    public int hashCode() {
        return java.util.Objects.hash(placement, at, limit, overscan);
    }
}
