package oracle;

import java.lang.reflect.Method;
import java.util.Arrays;

/**
 * {@code Launcher MAIN_CLASS ARGS...}: runs another main class (the broker, the storage tool,
 * DumpLogSegments) with a watchdog that halts the JVM as soon as its standard input reaches
 * end of file, that is when the xtask process that started it dies, however it dies. So no
 * JVM outlives {@code cargo xtask kafka}.
 */
public final class Launcher {
    private Launcher() {}

    public static void main(String[] args) throws Throwable {
        Thread watchdog = new Thread(() -> {
            try {
                while (System.in.read() >= 0) {
                    // keep reading: only end of file matters
                }
            } catch (Exception e) {
                // treated as end of file
            }
            Runtime.getRuntime().halt(143);
        }, "xtask-parent-watchdog");
        watchdog.setDaemon(true);
        watchdog.start();
        Method main = Class.forName(args[0]).getMethod("main", String[].class);
        try {
            main.invoke(null, (Object) Arrays.copyOfRange(args, 1, args.length));
        } catch (java.lang.reflect.InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
