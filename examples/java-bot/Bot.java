/*
 * java-bot: a Love Letter bot in Java, speaking protocol version 1 over its standard streams.
 *
 * It says hello (with $ARENA_TOKEN when the arena sets it), then answers one JSON line with one
 * JSON line: a random legal answer to "act", never the Princess if it can help it, and
 * {"type": "ok"} to everything else; after answering "shutdown" it exits. Its randomness is seeded
 * by the match, so a replayed match plays out the same way again.
 *
 * Standard library only: the JDK has no JSON, so Json below reads and writes the little it needs.
 *
 * Build: javac -d build Bot.java        Run: java -cp build Bot   (with protocol: stdio)
 */

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintStream;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

public final class Bot {
    private Random rng = new Random(0);

    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        Writer out = new OutputStreamWriter(System.out, StandardCharsets.UTF_8);
        PrintStream log = System.err;

        Map<String, Object> hello = new LinkedHashMap<>();
        hello.put("type", "hello");
        hello.put("protocol", 1L);
        hello.put("name", "java-bot");
        String token = System.getenv("ARENA_TOKEN");
        if (token != null) {
            hello.put("token", token);
        }
        send(out, hello);

        Bot bot = new Bot();
        String line;
        while ((line = in.readLine()) != null) {
            Map<String, Object> message = Json.object(Json.parse(line));
            Object type = message.get("type");
            if ("act".equals(type)) {
                send(out, bot.act(message));
                continue;
            }
            if ("match_start".equals(type)) {
                bot.matchStart(message, log);
            }
            send(out, Map.<String, Object>of("type", "ok"));
            if ("shutdown".equals(type)) {
                return;
            }
        }
    }

    /** One protocol line: the object, a newline, and a flush, so the arena sees it at once. */
    private static void send(Writer out, Map<String, Object> reply) throws IOException {
        out.write(Json.write(reply));
        out.write('\n');
        out.flush();
    }

    void matchStart(Map<String, Object> message, PrintStream log) {
        String matchId = String.valueOf(message.get("match_id"));
        Object seat = message.get("seat");
        rng = new Random((matchId + "/" + seat).hashCode());
        // Log to stderr, never stdout: the arena keeps the tail and shows it with any fault.
        log.println("match " + matchId + ": seat " + seat);
    }

    Map<String, Object> act(Map<String, Object> message) {
        List<Object> legal = Json.array(message.get("legal"));
        List<Integer> choices = new ArrayList<>();
        for (int i = 0; i < legal.size(); i++) {
            if (!"princess".equals(Json.object(legal.get(i)).get("card"))) {
                choices.add(i);
            }
        }
        int index = choices.isEmpty() ? rng.nextInt(legal.size()) : choices.get(rng.nextInt(choices.size()));
        Map<String, Object> reply = new LinkedHashMap<>();
        reply.put("type", "action");
        reply.put("index", (long) index);
        return reply;
    }

    /**
     * Just enough JSON: parse() gives Map (object, key order kept), List, String, Long or Double,
     * Boolean and null; write() does the reverse. Malformed input throws IllegalArgumentException.
     */
    static final class Json {
        private final String text;
        private int at;

        private Json(String text) {
            this.text = text;
        }

        static Object parse(String text) {
            Json json = new Json(text);
            Object value = json.value();
            json.space();
            if (json.at != text.length()) {
                throw json.error("trailing characters");
            }
            return value;
        }

        @SuppressWarnings("unchecked")
        static Map<String, Object> object(Object value) {
            if (!(value instanceof Map)) {
                throw new IllegalArgumentException("expected a JSON object");
            }
            return (Map<String, Object>) value;
        }

        @SuppressWarnings("unchecked")
        static List<Object> array(Object value) {
            if (!(value instanceof List)) {
                throw new IllegalArgumentException("expected a JSON array");
            }
            return (List<Object>) value;
        }

        private IllegalArgumentException error(String what) {
            return new IllegalArgumentException("JSON: " + what + " at character " + at);
        }

        private void space() {
            while (at < text.length() && " \t\r\n".indexOf(text.charAt(at)) >= 0) {
                at++;
            }
        }

        private char next() {
            space();
            if (at >= text.length()) {
                throw error("unexpected end");
            }
            return text.charAt(at);
        }

        private void expect(char c) {
            if (next() != c) {
                throw error("expected '" + c + "'");
            }
            at++;
        }

        private Object value() {
            char c = next();
            switch (c) {
                case '{':
                    return objectValue();
                case '[':
                    return arrayValue();
                case '"':
                    return string();
                case 't':
                    return word("true", Boolean.TRUE);
                case 'f':
                    return word("false", Boolean.FALSE);
                case 'n':
                    return word("null", null);
                default:
                    return number();
            }
        }

        private Map<String, Object> objectValue() {
            Map<String, Object> map = new LinkedHashMap<>();
            expect('{');
            if (next() == '}') {
                at++;
                return map;
            }
            while (true) {
                if (next() != '"') {
                    throw error("expected a key");
                }
                String key = string();
                expect(':');
                map.put(key, value());
                if (next() == ',') {
                    at++;
                    continue;
                }
                expect('}');
                return map;
            }
        }

        private List<Object> arrayValue() {
            List<Object> list = new ArrayList<>();
            expect('[');
            if (next() == ']') {
                at++;
                return list;
            }
            while (true) {
                list.add(value());
                if (next() == ',') {
                    at++;
                    continue;
                }
                expect(']');
                return list;
            }
        }

        private String string() {
            expect('"');
            StringBuilder out = new StringBuilder();
            while (true) {
                if (at >= text.length()) {
                    throw error("unterminated string");
                }
                char c = text.charAt(at++);
                if (c == '"') {
                    return out.toString();
                }
                if (c != '\\') {
                    out.append(c);
                    continue;
                }
                if (at >= text.length()) {
                    throw error("unterminated escape");
                }
                char e = text.charAt(at++);
                switch (e) {
                    case '"', '\\', '/' -> out.append(e);
                    case 'b' -> out.append('\b');
                    case 'f' -> out.append('\f');
                    case 'n' -> out.append('\n');
                    case 'r' -> out.append('\r');
                    case 't' -> out.append('\t');
                    case 'u' -> {
                        if (at + 4 > text.length()) {
                            throw error("short \\u escape");
                        }
                        try {
                            out.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
                        } catch (NumberFormatException bad) {
                            throw error("bad \\u escape");
                        }
                        at += 4; // a surrogate pair arrives as two escapes, and Java strings are UTF-16 too
                    }
                    default -> throw error("bad escape");
                }
            }
        }

        private Object word(String word, Object value) {
            if (!text.startsWith(word, at)) {
                throw error("expected " + word);
            }
            at += word.length();
            return value;
        }

        private Object number() {
            int start = at;
            while (at < text.length() && "+-0123456789.eE".indexOf(text.charAt(at)) >= 0) {
                at++;
            }
            String digits = text.substring(start, at);
            try {
                if (digits.matches("-?\\d+")) {
                    return Long.parseLong(digits);
                }
                return Double.parseDouble(digits);
            } catch (NumberFormatException bad) {
                at = start;
                throw error("unexpected character");
            }
        }

        static String write(Object value) {
            StringBuilder out = new StringBuilder();
            write(value, out);
            return out.toString();
        }

        private static void write(Object value, StringBuilder out) {
            if (value == null) {
                out.append("null");
            } else if (value instanceof String s) {
                writeString(s, out);
            } else if (value instanceof Number || value instanceof Boolean) {
                out.append(value);
            } else if (value instanceof Map<?, ?> map) {
                out.append('{');
                String comma = "";
                for (Map.Entry<?, ?> entry : map.entrySet()) {
                    out.append(comma);
                    writeString(String.valueOf(entry.getKey()), out);
                    out.append(':');
                    write(entry.getValue(), out);
                    comma = ",";
                }
                out.append('}');
            } else if (value instanceof List<?> list) {
                out.append('[');
                String comma = "";
                for (Object item : list) {
                    out.append(comma);
                    write(item, out);
                    comma = ",";
                }
                out.append(']');
            } else {
                throw new IllegalArgumentException("cannot write " + value.getClass().getName() + " as JSON");
            }
        }

        private static void writeString(String s, StringBuilder out) {
            out.append('"');
            for (int i = 0; i < s.length(); i++) {
                char c = s.charAt(i);
                switch (c) {
                    case '"' -> out.append("\\\"");
                    case '\\' -> out.append("\\\\");
                    case '\n' -> out.append("\\n");
                    case '\r' -> out.append("\\r");
                    case '\t' -> out.append("\\t");
                    default -> {
                        if (c < 0x20) {
                            out.append(String.format("\\u%04x", (int) c));
                        } else {
                            out.append(c);
                        }
                    }
                }
            }
            out.append('"');
        }
    }
}
