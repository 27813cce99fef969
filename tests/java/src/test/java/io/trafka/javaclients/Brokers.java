package io.trafka.javaclients;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.ExecutionException;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The broker under test, one per JVM: the one named by the system property `kafka.bootstrap` (or the
 * environment's KAFKA_BOOTSTRAP), which is how tests/java/test_java_suite.py points the suite at
 * Apache Kafka; without one, a trafka started here (with the python of `trafka.python`) and stopped
 * when the JVM exits. Every test names its own topics and groups, so they share it.
 */
final class Brokers {
    private static String bootstrap;
    private static RuntimeException failedToStart;

    private Brokers() {}

    static synchronized String bootstrap() {
        if (failedToStart != null) {
            throw failedToStart; // once: every later test fails with the same cause, without waiting again
        }
        if (bootstrap == null) {
            String given = System.getProperty("kafka.bootstrap", "");
            if (given.isBlank()) {
                given = System.getenv().getOrDefault("KAFKA_BOOTSTRAP", "");
            }
            if (given.isBlank()) {
                try {
                    given = startTrafka();
                } catch (RuntimeException e) {
                    failedToStart = e;
                    throw e;
                }
            }
            bootstrap = given;
        }
        return bootstrap;
    }

    /**
     * trafka configured as tests/kafka's Apache Kafka is: Kafka's StandardAuthorizer with the
     * unauthenticated PLAINTEXT principal (User:ANONYMOUS) a super user, so that ACLs are managed alike.
     */
    private static String startTrafka() {
        try {
            Path config = Files.createTempFile("trafka-", ".properties");
            Files.writeString(config, "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer\n"
                    + "super.users=User:ANONYMOUS\n"
                    // streams sessions as tests/kafka's Apache Kafka has them (StreamsScenariosTest's kill)
                    + "group.streams.session.timeout.ms=6000\ngroup.streams.heartbeat.interval.ms=1000\n");
            Trafka trafka = Trafka.start(System.getProperty("trafka.python", "python3"), config.toString());
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                try {
                    trafka.close();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }));
            return trafka.bootstrapServers();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    static String unique(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    static Admin admin() {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
        return Admin.create(props);
    }

    static Map<String, Object> producerConfig() {
        Map<String, Object> config = new HashMap<>();
        config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
        config.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        config.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        config.put(ProducerConfig.LINGER_MS_CONFIG, 0);
        return config;
    }

    static Map<String, Object> consumerConfig(String groupId) {
        Map<String, Object> config = new HashMap<>();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
        config.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        config.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        if (groupId != null) {
            config.put(ConsumerConfig.GROUP_ID_CONFIG, groupId);
        }
        config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        return config;
    }

    static void createTopic(String name, int partitions) throws ExecutionException, InterruptedException {
        createTopic(name, partitions, Map.of());
    }

    static void createTopic(String name, int partitions, Map<String, String> configs)
            throws ExecutionException, InterruptedException {
        try (Admin admin = admin()) {
            admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1).configs(configs))).all().get();
        }
    }

    /** `count` records `k<i>`/`v<i>` to partition i % partitions, acknowledged. */
    static void produce(String topic, int partitions, int count) throws Exception {
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerConfig())) {
            for (int i = 0; i < count; i++) {
                producer.send(new ProducerRecord<>(topic, i % partitions, "k" + i, "v" + i));
            }
            producer.flush();
        }
    }
}
