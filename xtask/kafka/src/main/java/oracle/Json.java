package oracle;

import java.io.IOException;
import java.io.Writer;

/** A minimal streaming JSON writer (numbers, strings, arrays, objects); no dependency. */
final class Json {
    private final Writer out;
    private boolean first = true;

    Json(Writer out) {
        this.out = out;
    }

    private void sep() throws IOException {
        if (!first) out.write(',');
        first = false;
    }

    Json begin() throws IOException {
        sep();
        out.write('{');
        first = true;
        return this;
    }

    Json end() throws IOException {
        out.write('}');
        first = false;
        return this;
    }

    Json beginArray() throws IOException {
        sep();
        out.write('[');
        first = true;
        return this;
    }

    Json endArray() throws IOException {
        out.write(']');
        first = false;
        return this;
    }

    Json key(String k) throws IOException {
        sep();
        str(k);
        out.write(':');
        first = true;
        return this;
    }

    Json value(long v) throws IOException {
        sep();
        out.write(Long.toString(v));
        return this;
    }

    Json value(boolean v) throws IOException {
        sep();
        out.write(v ? "true" : "false");
        return this;
    }

    Json value(String v) throws IOException {
        sep();
        if (v == null) out.write("null");
        else str(v);
        return this;
    }

    private void str(String s) throws IOException {
        out.write('"');
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') {
                out.write('\\');
                out.write(c);
            } else if (c < 0x20) {
                out.write(String.format("\\u%04x", (int) c));
            } else {
                out.write(c);
            }
        }
        out.write('"');
    }
}
