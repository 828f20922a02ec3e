package com.livedelta.client;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The real binary (LIVEDELTA_BINARY, or the repository's debug build) and redis-server, for the tests. */
final class Servers {
    private Servers() {}

    static String binary() {
        String path = System.getenv("LIVEDELTA_BINARY");
        return path != null ? path : new File("../../.build/debug/livedelta").getAbsolutePath();
    }

    static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    /** A running livedelta; {@link #stop()} ends it. */
    static final class Server implements AutoCloseable {
        final Process process;
        final int port;

        Server(String... flags) throws Exception {
            this(0, flags);
        }

        Server(int port, String... flags) throws Exception {
            List<String> command = new ArrayList<>(List.of(binary(), "--host", "127.0.0.1", "--port", String.valueOf(port)));
            command.addAll(List.of(flags));
            process = new ProcessBuilder(command).redirectErrorStream(true).start();
            BufferedReader output = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
            CompletableFuture<Integer> listening = new CompletableFuture<>();
            Thread reader = new Thread(() -> {
                Pattern pattern = Pattern.compile("listening.*port=(\\d+)");
                try {
                    for (String line; (line = output.readLine()) != null; ) {
                        Matcher match = pattern.matcher(line);
                        if (match.find()) listening.complete(Integer.parseInt(match.group(1)));
                    }
                } catch (IOException ignored) {
                    // The process ended.
                }
                listening.completeExceptionally(new IllegalStateException("livedelta did not start"));
            });
            reader.setDaemon(true);
            reader.start();
            this.port = listening.get(20, TimeUnit.SECONDS);
        }

        String url() {
            return "http://127.0.0.1:" + port;
        }

        void stop() throws InterruptedException {
            process.destroy();
            process.waitFor(20, TimeUnit.SECONDS);
        }

        void kill() throws InterruptedException {
            process.destroyForcibly();
            process.waitFor(20, TimeUnit.SECONDS);
        }

        @Override
        public void close() throws InterruptedException {
            stop();
        }
    }

    /** A redis-server that keeps nothing on disk. */
    static final class Redis implements AutoCloseable {
        final Process process;
        final int port;

        Redis() throws Exception {
            port = freePort();
            File directory = Files.createTempDirectory("livedelta-redis").toFile();
            process = new ProcessBuilder("redis-server", "--port", String.valueOf(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                "--dir", directory.getPath()).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            for (int i = 0; i < 200; i++) {
                try (Socket socket = new Socket("127.0.0.1", port)) {
                    return;
                } catch (IOException notYet) {
                    Thread.sleep(25);
                }
            }
            throw new IllegalStateException("redis-server did not start");
        }

        String url() {
            return "redis://127.0.0.1:" + port;
        }

        @Override
        public void close() throws InterruptedException {
            process.destroy();
            process.waitFor(10, TimeUnit.SECONDS);
        }
    }
}
