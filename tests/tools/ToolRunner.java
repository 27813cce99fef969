// Kafka's command-line tools run one after another in one JVM (ADR 94, beside ADR 66).
//
// `java -cp <Kafka's jars> ToolRunner.java` (a single-file source program: no build step). Each line on
// stdin is a tool's main class and its arguments, separated by tabs; for each, the runner calls the
// main method with System.out and System.err (and Scala's Console, which starts from them) sent to
// buffers, and Kafka's Exit procedures turned into an exception, so a tool's `Exit.exit(n)` ends the
// tool, not the JVM. Then it writes to its own stdout: the exit status, and the two outputs, each
// preceded by its length in bytes on a line of its own.
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

public class ToolRunner {
    static final class ToolExit extends RuntimeException {
        final int status;

        ToolExit(int status) {
            super("exit " + status, null, false, false);
            this.status = status;
        }
    }

    /** A stream whose destination is switched per tool. */
    static final class Switch extends OutputStream {
        volatile OutputStream target = OutputStream.nullOutputStream();

        @Override
        public void write(int b) throws java.io.IOException {
            target.write(b);
        }

        @Override
        public void write(byte[] b, int off, int len) throws java.io.IOException {
            target.write(b, off, len);
        }
    }

    /**
     * System.out and System.err for every tool: a tool that closes them (the metadata shell's
     * non-interactive run closes its PrintWriter over System.out) flushes them, and the next tool still
     * prints. A closed PrintStream drops every later write without a word.
     */
    static final class Unclosable extends PrintStream {
        Unclosable(OutputStream target) throws java.io.UnsupportedEncodingException {
            super(target, true, "UTF-8");
        }

        @Override
        public void close() {
            flush();
        }
    }

    static volatile Integer exited;

    public static void main(String[] ignored) throws Exception {
        PrintStream reply = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), false, "UTF-8");
        Switch out = new Switch();
        Switch err = new Switch();
        System.setOut(new Unclosable(out));
        System.setErr(new Unclosable(err));
        // A tool's first Exit.exit ends it as it would end its JVM: its status is the tool's, and nothing
        // the tool's own catch blocks print after it (the exception unwinding through them) is kept.
        org.apache.kafka.common.utils.Exit.Procedure exit = (status, message) -> {
            if (exited == null) {
                System.out.flush();
                System.err.flush();
                exited = status;
                out.target = OutputStream.nullOutputStream();
                err.target = OutputStream.nullOutputStream();
            }
            throw new ToolExit(status);
        };
        org.apache.kafka.common.utils.Exit.setExitProcedure(exit);
        org.apache.kafka.common.utils.Exit.setHaltProcedure(exit);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] words = line.split("\t", -1);
            ByteArrayOutputStream stdout = new ByteArrayOutputStream();
            ByteArrayOutputStream stderr = new ByteArrayOutputStream();
            out.target = stdout;
            err.target = stderr;
            int status = 0;
            exited = null;
            try {
                Class.forName(words[0])
                    .getMethod("main", String[].class)
                    .invoke(null, (Object) Arrays.copyOfRange(words, 1, words.length));
            } catch (InvocationTargetException e) {
                Throwable cause = e.getCause();
                if (cause instanceof ToolExit) {
                    status = ((ToolExit) cause).status;
                } else {
                    cause.printStackTrace(System.err);
                    status = 1;
                }
            } catch (ToolExit e) {
                status = e.status;
            }
            System.out.flush();
            System.err.flush();
            if (exited != null) {
                status = exited;
            }
            out.target = OutputStream.nullOutputStream();
            err.target = OutputStream.nullOutputStream();
            byte[] o = stdout.toByteArray();
            byte[] r = stderr.toByteArray();
            reply.print(status + "\n" + o.length + "\n");
            reply.write(o);
            reply.print(r.length + "\n");
            reply.write(r);
            reply.flush();
        }
    }
}
