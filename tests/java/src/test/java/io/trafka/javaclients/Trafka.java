package io.trafka.javaclients;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * trafka as a Java test's Kafka: `python -m trafka serve --memory --port 0 --ready-file F` in a child
 * process, its address read from F once it listens (the README's Java example). Closing it stops the
 * broker with SIGTERM (a graceful stop) and waits for it.
 */
public final class Trafka implements AutoCloseable {
    private static final Pattern BOOTSTRAP = Pattern.compile("\"bootstrap_servers\"\\s*:\\s*\"([^\"]+)\"");

    private final Process process;
    private final String bootstrapServers;
    private final Path log;

    private Trafka(Process process, String bootstrapServers, Path log) {
        this.process = process;
        this.bootstrapServers = bootstrapServers;
        this.log = log;
    }

    /** Starts `python -m trafka serve --memory` on an ephemeral port, plus any further serve arguments. */
    public static Trafka start(String python, String... serveArgs) throws IOException, InterruptedException {
        List<String> storage = new ArrayList<>(List.of("--memory", "--port", "0"));
        storage.addAll(List.of(serveArgs));
        return launch(python, storage);
    }

    /**
     * Starts `python -m trafka serve --data-dir D` on `port` (0: an ephemeral one), plus any further serve
     * arguments: started again on the same data dir and the port it had, it is the same broker restarted.
     */
    public static Trafka startOn(String python, Path dataDir, int port, String... serveArgs)
            throws IOException, InterruptedException {
        List<String> storage = new ArrayList<>(List.of("--data-dir", dataDir.toString(), "--port", String.valueOf(port)));
        storage.addAll(List.of(serveArgs));
        return launch(python, storage);
    }

    private static Trafka launch(String python, List<String> serveArgs) throws IOException, InterruptedException {
        Path dir = Files.createTempDirectory("trafka-");
        Path ready = dir.resolve("ready.json");
        Path log = dir.resolve("trafka.log");
        List<String> command = new ArrayList<>(List.of(python, "-m", "trafka", "serve",
                "--host", "127.0.0.1", "--ready-file", ready.toString()));
        command.addAll(serveArgs);
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
        // A consumer group's first join is not held back for newcomers (Kafka's own test default).
        builder.environment().put("TRAFKA_GROUPS_INITIAL_REBALANCE_DELAY_MS", "0");
        Process process = builder.start();
        // Generous: on a loaded machine the interpreter alone takes seconds to import the broker.
        long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        while (!Files.exists(ready)) {
            if (!process.isAlive() || System.nanoTime() > deadline) {
                process.destroyForcibly();
                throw new IOException("trafka did not start: " + String.join(" ", command) + "\n" + Files.readString(log));
            }
            Thread.sleep(20);
        }
        Matcher address = BOOTSTRAP.matcher(Files.readString(ready));
        if (!address.find()) {
            process.destroyForcibly();
            throw new IOException("no bootstrap_servers in " + ready);
        }
        return new Trafka(process, address.group(1), log);
    }

    public String bootstrapServers() {
        return bootstrapServers;
    }

    public int port() {
        return Integer.parseInt(bootstrapServers.substring(bootstrapServers.lastIndexOf(':') + 1));
    }

    /** What the broker printed so far (stdout and stderr). */
    public String log() throws IOException {
        return Files.readString(log);
    }

    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(20, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor();
        }
    }
}
