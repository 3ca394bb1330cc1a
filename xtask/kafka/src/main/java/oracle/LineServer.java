package oracle;

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;

/**
 * The line protocol of the vs-kafka servers (VsBench, CleanBench, OpensBench): one command
 * a line on standard input, its words separated by single spaces; one reply a line,
 * {@code ok <words>} or {@code err <exception>}; {@code quit} or the end of input ends it.
 */
final class LineServer {
    private LineServer() {}

    /** One command: its words in, the reply's words (after {@code ok}) out. */
    interface Command {
        String run(String[] words) throws Exception;
    }

    /** Serves {@code command} until {@code quit} or the end of standard input. */
    static void serve(Command command) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), false);
        for (String line; (line = in.readLine()) != null; ) {
            String[] w = line.trim().split(" ");
            if (w[0].equals("quit")) break;
            String reply;
            try {
                reply = "ok " + command.run(w);
            } catch (Exception e) {
                reply = "err " + e.toString().replace('\n', ' ');
            }
            out.println(reply);
            out.flush();
        }
    }
}
