// The Kafka Streams phase of the benchmarks (bench/streams.py starts the brokers and runs this).
//
// `java -cp <kafka-streams' jars> StreamsBench.java BOOTSTRAP INPUT OUTPUT LINES WORDS` (a single-file
// source program). The input topic holds LINES lines of WORDS words already. Two phases, one JSON line:
// 1. throughput: one word-count instance (`group.protocol=streams`, groupBy + count) processes the
//    lines; records/s is LINES over the time from its first count on the output topic to its last;
// 2. the rebalance pause: a second instance joins, the group settles, a producer writes a line every
//    2 ms; a third instance joins; the pause is the longest gap between two counts arriving on the
//    output topic from the third instance's start until the group is Stable with three members plus
//    one second, and `settle_s` the time until it is Stable.
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.StreamsGroupDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.GroupProtocol;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;

public class StreamsBench {
    static KafkaStreams wordCount(String bootstrap, String appId, String input, String output) throws Exception {
        StreamsBuilder builder = new StreamsBuilder();
        builder.stream(input, Consumed.with(Serdes.String(), Serdes.String()))
                .flatMapValues(line -> Arrays.asList(line.split(" ")))
                .groupBy((key, word) -> word)
                .count(Materialized.as("counts"))
                .toStream()
                .to(output, Produced.with(Serdes.String(), Serdes.Long()));
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, appId);
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, GroupProtocol.STREAMS.name().toLowerCase());
        props.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        props.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        props.put(StreamsConfig.STATE_DIR_CONFIG, Files.createTempDirectory("bench-streams-").toString());
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 100);
        props.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0); // a count on the output per word read
        props.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
        return new KafkaStreams(builder.build(), props);
    }

    /** Arrival times (ns) of output records, read by a thread of its own until `stop`. */
    static Thread watch(String bootstrap, String output, ConcurrentLinkedQueue<Long> arrivals, AtomicBoolean stop) {
        Thread reader = new Thread(() -> {
            Properties props = new Properties();
            props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            props.put(ConsumerConfig.GROUP_ID_CONFIG, "bench-watch-" + UUID.randomUUID());
            props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
            props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
            props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
            try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
                consumer.subscribe(List.of(output));
                while (!stop.get()) {
                    int n = consumer.poll(Duration.ofMillis(20)).count();
                    long now = System.nanoTime();
                    for (int i = 0; i < n; i++) {
                        arrivals.add(now);
                    }
                }
            }
        });
        reader.start();
        return reader;
    }

    static double awaitStable(Admin admin, String appId, int members, long since) throws Exception {
        while (true) {
            StreamsGroupDescription group = admin.describeStreamsGroups(List.of(appId)).all().get().get(appId);
            boolean assigned = group.members().stream().allMatch(m -> !m.assignment().activeTasks().isEmpty());
            if (group.groupState() == GroupState.STABLE && group.members().size() == members && assigned) {
                return (System.nanoTime() - since) / 1e9;
            }
            if (System.nanoTime() - since > Duration.ofSeconds(180).toNanos()) {
                throw new IllegalStateException("the group never settled with " + members + " members: " + group);
            }
            Thread.sleep(20);
        }
    }

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        String input = args[1];
        String output = args[2];
        long lines = Long.parseLong(args[3]);
        long words = Long.parseLong(args[4]);
        String appId = "bench-wordcount-" + UUID.randomUUID().toString().substring(0, 8);
        Properties adminProps = new Properties();
        adminProps.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        List<KafkaStreams> instances = new ArrayList<>();
        ConcurrentLinkedQueue<Long> arrivals = new ConcurrentLinkedQueue<>();
        AtomicBoolean stop = new AtomicBoolean();
        Thread reader = watch(bootstrap, output, arrivals, stop);
        try (Admin admin = Admin.create(adminProps)) {
            // 1. throughput: one instance through the lines already there
            KafkaStreams first = wordCount(bootstrap, appId, input, output);
            instances.add(first);
            long started = System.nanoTime();
            first.start();
            long expected = lines * words;
            while (arrivals.size() < expected) {
                if (System.nanoTime() - started > Duration.ofSeconds(600).toNanos()) {
                    throw new IllegalStateException("counted " + arrivals.size() + " of " + expected);
                }
                Thread.sleep(10);
            }
            long firstCount = arrivals.peek();
            long lastCount = arrivals.stream().mapToLong(Long::longValue).max().getAsLong();
            double recordsPerS = lines / ((lastCount - firstCount) / 1e9);
            double startToFirstS = (firstCount - started) / 1e9;

            // 2. the pause when a third instance joins two, under a steady stream of lines
            KafkaStreams second = wordCount(bootstrap, appId, input, output);
            instances.add(second);
            long joined = System.nanoTime();
            second.start();
            double secondSettleS = awaitStable(admin, appId, 2, joined);
            AtomicBoolean producing = new AtomicBoolean(true);
            Thread producer = new Thread(() -> {
                Map<String, Object> config = Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                        ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class,
                        ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class,
                        ProducerConfig.LINGER_MS_CONFIG, 0);
                try (KafkaProducer<String, String> p = new KafkaProducer<>(config)) {
                    long i = 0;
                    while (producing.get()) {
                        p.send(new ProducerRecord<>(input, "steady" + i, "w" + (i % 97) + " w" + (i % 89)));
                        i++;
                        Thread.sleep(2);
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            producer.start();
            Thread.sleep(2000); // the steady state before the join
            KafkaStreams third = wordCount(bootstrap, appId, input, output);
            instances.add(third);
            long thirdStart = System.nanoTime();
            third.start();
            double settleS = awaitStable(admin, appId, 3, thirdStart);
            Thread.sleep(1000);
            long windowEnd = System.nanoTime();
            producing.set(false);
            producer.join();
            long previous = thirdStart;
            long longest = 0;
            for (long at : arrivals.stream().mapToLong(Long::longValue).sorted().toArray()) {
                if (at < thirdStart || at > windowEnd) {
                    continue;
                }
                longest = Math.max(longest, at - previous);
                previous = at;
            }
            longest = Math.max(longest, windowEnd - previous);
            System.out.println(String.format(java.util.Locale.ROOT,
                    "{\"records_per_s\": %.1f, \"start_to_first_count_s\": %.3f, \"second_settle_s\": %.3f, "
                            + "\"third_settle_s\": %.3f, \"third_join_pause_s\": %.3f}",
                    recordsPerS, startToFirstS, secondSettleS, settleS, longest / 1e9));
        } finally {
            stop.set(true);
            reader.join();
            instances.forEach(KafkaStreams::close);
        }
    }
}
