// Kafka's own metadata hash (KIP-1101), for trafka's to be compared with: each line of standard input is
// a group's topics, `name/uuid/partitions/racks;...` (racks: partition racks joined by `|` per partition,
// partitions by `,`; empty for none), and the answer is a line of `topicHash ...` then the group hash, all
// from Kafka's `org.apache.kafka.coordinator.group.Utils` (the jars of tests/kafka/pom.xml).
// Run: java -cp <classpath> tests/kafka/MetadataHash.java < input
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.common.runtime.CoordinatorMetadataDelta;
import org.apache.kafka.coordinator.common.runtime.CoordinatorMetadataImage;
import org.apache.kafka.coordinator.group.Utils;

public class MetadataHash {
    record Topic(String name, Uuid id, int partitions, List<List<String>> racks)
            implements CoordinatorMetadataImage.TopicMetadata {
        public List<String> partitionRacks(int partition) {
            return partition < racks.size() ? new ArrayList<>(racks.get(partition)) : new ArrayList<>();
        }

        public int partitionCount() {
            return partitions;
        }
    }

    record Image(Map<String, Topic> topics) implements CoordinatorMetadataImage {
        public Set<Uuid> topicIds() {
            throw new UnsupportedOperationException();
        }

        public Set<String> topicNames() {
            return topics.keySet();
        }

        public Optional<TopicMetadata> topicMetadata(String name) {
            return Optional.ofNullable(topics.get(name));
        }

        public Optional<TopicMetadata> topicMetadata(Uuid id) {
            throw new UnsupportedOperationException();
        }

        public CoordinatorMetadataDelta emptyDelta() {
            throw new UnsupportedOperationException();
        }

        public long version() {
            return 0;
        }

        public boolean isEmpty() {
            return topics.isEmpty();
        }
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            Map<String, Topic> topics = new HashMap<>();
            for (String spec : line.isEmpty() ? new String[0] : line.split(";", -1)) {
                String[] f = spec.split("/", -1);
                List<List<String>> racks = new ArrayList<>();
                if (!f[3].isEmpty()) {
                    for (String p : f[3].split(",", -1)) {
                        racks.add(p.isEmpty() ? new ArrayList<>() : new ArrayList<>(Arrays.asList(p.split("\\|"))));
                    }
                }
                topics.put(f[0], new Topic(f[0], Uuid.fromString(f[1]), Integer.parseInt(f[2]), racks));
            }
            Image image = new Image(topics);
            Map<String, Long> hashes = new HashMap<>();
            StringBuilder out = new StringBuilder();
            for (String name : topics.keySet().stream().sorted().toList()) {
                long hash = Utils.computeTopicHash(name, image);
                hashes.put(name, hash);
                out.append(name).append('=').append(hash).append(' ');
            }
            out.append(Utils.computeGroupHash(hashes));
            System.out.println(out);
        }
    }
}
