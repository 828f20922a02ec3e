package com.livedelta.client;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A sectioned session's {@code sequential} operations replayed on its flattened rows (each
 * section a header row, then its items), each turned into the row ranges it covers: a section
 * removed or inserted is its header and items as one range; a section moved, one range removed
 * and one inserted; a section's own fields changed, its header row changed; an item operation,
 * its rows shifted past the headers and items before its section.
 */
final class Flattened {
    private Flattened() {}

    /** Rows split into sections, each its header first. */
    static List<List<LiveList.Row>> sections(List<LiveList.Row> rows) {
        List<List<LiveList.Row>> sections = new ArrayList<>();
        for (LiveList.Row row : rows) {
            if (row.isHeader) sections.add(new ArrayList<>());
            if (sections.isEmpty()) throw new IllegalArgumentException("an item before any section");
            sections.get(sections.size() - 1).add(row);
        }
        return sections;
    }

    private static int offset(List<List<LiveList.Row>> sections, int section) {
        int offset = 0;
        for (int s = 0; s < section; s++) offset += sections.get(s).size();
        return offset;
    }

    private static int size(List<List<LiveList.Row>> sections, int from, int count) {
        int size = 0;
        for (int s = from; s < from + count; s++) size += sections.get(s).size();
        return size;
    }

    @SuppressWarnings("unchecked")
    static List<LiveList.Row> replay(List<LiveList.Row> old, List<Object> operations, List<LiveList.Row> next, List<Object[]> calls) {
        List<List<LiveList.Row>> sections = sections(old);
        List<List<LiveList.Row>> target = sections(next);
        for (Object raw : operations) {
            Map<String, Object> op = (Map<String, Object>) raw;
            String kind = (String) op.get("op");
            switch (kind) {
                case "removeSections": {
                    int position = LiveList.number(op, "position"), count = LiveList.number(op, "count");
                    calls.add(new Object[] {"remove", offset(sections, position), size(sections, position, count)});
                    sections.subList(position, position + count).clear();
                    break;
                }
                case "moveSection": {
                    int from = LiveList.number(op, "from"), to = LiveList.number(op, "to");
                    int start = offset(sections, from);
                    List<LiveList.Row> moved = sections.remove(from);
                    calls.add(new Object[] {"remove", start, moved.size()});
                    sections.add(to, moved);
                    calls.add(new Object[] {"insert", offset(sections, to), moved.size()});
                    break;
                }
                case "insertSections": {
                    int position = LiveList.number(op, "position"), count = LiveList.number(op, "count");
                    for (int s = position; s < position + count; s++) sections.add(s, new ArrayList<>(target.get(s)));
                    calls.add(new Object[] {"insert", offset(sections, position), size(sections, position, count)});
                    break;
                }
                case "changeSections": {
                    int position = LiveList.number(op, "position"), count = LiveList.number(op, "count");
                    for (int s = position; s < position + count; s++) {
                        sections.get(s).set(0, target.get(s).get(0));
                        calls.add(new Object[] {"change", offset(sections, s), 1, null});
                    }
                    break;
                }
                case "remove": case "insert": case "change": {
                    int section = LiveList.number(op, "section"), position = LiveList.number(op, "position"), count = LiveList.number(op, "count");
                    List<LiveList.Row> rows = sections.get(section);
                    int flat = offset(sections, section) + 1 + position;
                    if (kind.equals("remove")) {
                        rows.subList(1 + position, 1 + position + count).clear();
                        calls.add(new Object[] {"remove", flat, count});
                    } else if (kind.equals("insert")) {
                        rows.addAll(1 + position, target.get(section).subList(1 + position, 1 + position + count));
                        calls.add(new Object[] {"insert", flat, count});
                    } else {
                        for (int r = 1 + position; r < 1 + position + count; r++) rows.set(r, target.get(section).get(r));
                        calls.add(new Object[] {"change", flat, count, op.get("payload")});
                    }
                    break;
                }
                case "move": {
                    Map<String, Object> from = (Map<String, Object>) op.get("from"), to = (Map<String, Object>) op.get("to");
                    int fromSection = LiveList.number(from, "section"), fromItem = LiveList.number(from, "item");
                    int toSection = LiveList.number(to, "section"), toItem = LiveList.number(to, "item");
                    int fromFlat = offset(sections, fromSection) + 1 + fromItem;
                    LiveList.Row row = sections.get(fromSection).remove(1 + fromItem);
                    sections.get(toSection).add(1 + toItem, row);
                    calls.add(new Object[] {"move", fromFlat, offset(sections, toSection) + 1 + toItem});
                    break;
                }
                default: throw new IllegalArgumentException("unknown operation " + kind);
            }
        }
        List<LiveList.Row> rows = new ArrayList<>();
        for (List<LiveList.Row> section : sections) rows.addAll(section);
        return rows;
    }
}
