package com.livedelta.client;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * JSON (RFC 8259) read into plain Java values and written back: objects as {@code Map<String,
 * Object>} (member order kept), arrays as {@code List<Object>}, numbers as {@code Long} where
 * they are integers and {@code Double} otherwise, strings, booleans and {@code null}. No
 * dependency: the library adds nothing to an app beyond itself.
 */
public final class Json {
    private final String text;
    private int at;

    private Json(String text) {
        this.text = text;
    }

    /** Reads one JSON value; throws IllegalArgumentException, naming the offset, where it is not JSON. */
    public static Object parse(String text) {
        Json reader = new Json(text);
        reader.space();
        Object value = reader.value();
        reader.space();
        if (reader.at != text.length()) throw reader.error("text after the value");
        return value;
    }

    private IllegalArgumentException error(String what) {
        return new IllegalArgumentException("not JSON at offset " + at + ": " + what);
    }

    private void space() {
        while (at < text.length() && " \t\r\n".indexOf(text.charAt(at)) >= 0) at++;
    }

    private Object value() {
        if (at >= text.length()) throw error("a value is missing");
        char c = text.charAt(at);
        switch (c) {
            case '{': return object();
            case '[': return array();
            case '"': return string();
            case 't': return literal("true", Boolean.TRUE);
            case 'f': return literal("false", Boolean.FALSE);
            case 'n': return literal("null", null);
            default: return number();
        }
    }

    private Object literal(String word, Object value) {
        if (!text.startsWith(word, at)) throw error("expected " + word);
        at += word.length();
        return value;
    }

    private Map<String, Object> object() {
        Map<String, Object> members = new LinkedHashMap<>();
        at++;
        space();
        if (at < text.length() && text.charAt(at) == '}') {
            at++;
            return members;
        }
        while (true) {
            space();
            if (at >= text.length() || text.charAt(at) != '"') throw error("expected a member name");
            String name = string();
            space();
            if (at >= text.length() || text.charAt(at) != ':') throw error("expected ':'");
            at++;
            space();
            members.put(name, value());
            space();
            if (at < text.length() && text.charAt(at) == ',') {
                at++;
                continue;
            }
            if (at < text.length() && text.charAt(at) == '}') {
                at++;
                return members;
            }
            throw error("expected ',' or '}'");
        }
    }

    private List<Object> array() {
        List<Object> values = new ArrayList<>();
        at++;
        space();
        if (at < text.length() && text.charAt(at) == ']') {
            at++;
            return values;
        }
        while (true) {
            space();
            values.add(value());
            space();
            if (at < text.length() && text.charAt(at) == ',') {
                at++;
                continue;
            }
            if (at < text.length() && text.charAt(at) == ']') {
                at++;
                return values;
            }
            throw error("expected ',' or ']'");
        }
    }

    private String string() {
        StringBuilder out = new StringBuilder();
        at++;
        while (at < text.length()) {
            char c = text.charAt(at++);
            if (c == '"') return out.toString();
            if (c != '\\') {
                out.append(c);
                continue;
            }
            if (at >= text.length()) break;
            char e = text.charAt(at++);
            switch (e) {
                case '"': case '\\': case '/': out.append(e); break;
                case 'b': out.append('\b'); break;
                case 'f': out.append('\f'); break;
                case 'n': out.append('\n'); break;
                case 'r': out.append('\r'); break;
                case 't': out.append('\t'); break;
                case 'u':
                    if (at + 4 > text.length()) throw error("a short \\u escape");
                    out.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
                    at += 4;
                    break;
                default: throw error("an unknown escape");
            }
        }
        throw error("an unterminated string");
    }

    private Object number() {
        int start = at;
        if (at < text.length() && text.charAt(at) == '-') at++;
        while (at < text.length() && "0123456789+-.eE".indexOf(text.charAt(at)) >= 0) at++;
        String digits = text.substring(start, at);
        if (digits.isEmpty() || digits.equals("-")) throw error("expected a value");
        try {
            if (digits.indexOf('.') < 0 && digits.indexOf('e') < 0 && digits.indexOf('E') < 0) return Long.parseLong(digits);
            return Double.parseDouble(digits);
        } catch (NumberFormatException overflow) {
            return Double.parseDouble(digits);
        }
    }

    /** Writes a value (maps, lists, strings, numbers, booleans, null) as JSON. */
    public static String write(Object value) {
        StringBuilder out = new StringBuilder();
        write(value, out);
        return out.toString();
    }

    @SuppressWarnings("unchecked")
    private static void write(Object value, StringBuilder out) {
        if (value == null) {
            out.append("null");
        } else if (value instanceof String) {
            quote((String) value, out);
        } else if (value instanceof Map) {
            out.append('{');
            boolean first = true;
            for (Map.Entry<String, Object> member : ((Map<String, Object>) value).entrySet()) {
                if (!first) out.append(',');
                first = false;
                quote(member.getKey(), out);
                out.append(':');
                write(member.getValue(), out);
            }
            out.append('}');
        } else if (value instanceof List) {
            out.append('[');
            boolean first = true;
            for (Object element : (List<Object>) value) {
                if (!first) out.append(',');
                first = false;
                write(element, out);
            }
            out.append(']');
        } else if (value instanceof Double || value instanceof Float) {
            double number = ((Number) value).doubleValue();
            if (number == Math.rint(number) && Math.abs(number) < 1e15) out.append((long) number);
            else out.append(number);
        } else {
            out.append(value);
        }
    }

    private static void quote(String text, StringBuilder out) {
        out.append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '"': out.append("\\\""); break;
                case '\\': out.append("\\\\"); break;
                case '\n': out.append("\\n"); break;
                case '\r': out.append("\\r"); break;
                case '\t': out.append("\\t"); break;
                default:
                    if (c < 0x20) out.append(String.format("\\u%04x", (int) c));
                    else out.append(c);
            }
        }
        out.append('"');
    }

    /** A map literal helper: {@code Json.object("items", list, "options", options)}. */
    public static Map<String, Object> object(Object... namesAndValues) {
        Map<String, Object> members = new LinkedHashMap<>();
        for (int i = 0; i + 1 < namesAndValues.length; i += 2) members.put((String) namesAndValues[i], namesAndValues[i + 1]);
        return members;
    }
}
