// Test tooling of the real-Kafka suite, never shipped: a KIP-405 RemoteStorageManager that keeps
// offloaded segments in a local folder, so the suite can run tiered topics on Apache Kafka 4.1.0
// (which has the remote-log machinery and the topic-based metadata manager but no storage
// plugin). The suite compiles it at test time against the distribution's libs/ (tiered.rs).
//
// Layout: <rsm.config.dir>/<topic>-<partition>/<start offset>-<end offset>-<segment uuid>.<kind>,
// kind one of log, index, timeindex, txnindex, snapshot, epoch. The .log files are the remote
// bytes the suite measures.
package ballasttest;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.server.log.remote.storage.LogSegmentData;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteStorageException;
import org.apache.kafka.server.log.remote.storage.RemoteStorageManager;

public class LocalFolderRemoteStorageManager implements RemoteStorageManager {
    private Path root;

    @Override
    public void configure(Map<String, ?> configs) {
        Object dir = configs.get("dir");
        root = Paths.get(dir == null ? "remote-segments" : dir.toString());
    }

    private Path file(RemoteLogSegmentMetadata m, String kind) throws IOException {
        String tp = m.topicIdPartition().topic() + "-" + m.topicIdPartition().partition();
        Path dir = root.resolve(tp);
        Files.createDirectories(dir);
        // Named by the segment's offsets, so the suite can tell which remote bytes are still
        // local too (closed segments are offloaded before local retention deletes them).
        String name = String.format("%020d-%020d-%s", m.startOffset(), m.endOffset(),
                m.remoteLogSegmentId().id());
        return dir.resolve(name + "." + kind);
    }

    @Override
    public Optional<RemoteLogSegmentMetadata.CustomMetadata> copyLogSegmentData(
            RemoteLogSegmentMetadata m, LogSegmentData data) throws RemoteStorageException {
        try {
            // Written under a temporary name, then moved: a reader never sees half a segment.
            copy(data.logSegment(), file(m, "log"));
            copy(data.offsetIndex(), file(m, "index"));
            copy(data.timeIndex(), file(m, "timeindex"));
            if (data.transactionIndex().isPresent()) {
                copy(data.transactionIndex().get(), file(m, "txnindex"));
            }
            copy(data.producerSnapshotIndex(), file(m, "snapshot"));
            ByteBuffer epochs = data.leaderEpochIndex().duplicate();
            byte[] bytes = new byte[epochs.remaining()];
            epochs.get(bytes);
            Path epoch = file(m, "epoch");
            Path tmp = epoch.resolveSibling(epoch.getFileName() + ".tmp");
            Files.write(tmp, bytes);
            Files.move(tmp, epoch, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            return Optional.empty();
        } catch (IOException e) {
            throw new RemoteStorageException(e);
        }
    }

    private static void copy(Path from, Path to) throws IOException {
        Path tmp = to.resolveSibling(to.getFileName() + ".tmp");
        Files.copy(from, tmp, StandardCopyOption.REPLACE_EXISTING);
        Files.move(tmp, to, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    @Override
    public InputStream fetchLogSegment(RemoteLogSegmentMetadata m, int start)
            throws RemoteStorageException {
        return fetchLogSegment(m, start, Integer.MAX_VALUE);
    }

    @Override
    public InputStream fetchLogSegment(RemoteLogSegmentMetadata m, int start, int end)
            throws RemoteStorageException {
        try (RandomAccessFile f = new RandomAccessFile(file(m, "log").toFile(), "r")) {
            long last = Math.min((long) end, f.length() - 1);
            int len = (int) Math.max(0, last - start + 1);
            byte[] bytes = new byte[len];
            f.seek(start);
            f.readFully(bytes);
            return new ByteArrayInputStream(bytes);
        } catch (IOException e) {
            throw new RemoteStorageException(e);
        }
    }

    @Override
    public InputStream fetchIndex(RemoteLogSegmentMetadata m, IndexType type)
            throws RemoteStorageException {
        String kind;
        switch (type) {
            case OFFSET: kind = "index"; break;
            case TIMESTAMP: kind = "timeindex"; break;
            case PRODUCER_SNAPSHOT: kind = "snapshot"; break;
            case TRANSACTION: kind = "txnindex"; break;
            default: kind = "epoch"; break;
        }
        try {
            Path p = file(m, kind);
            if (!Files.exists(p)) {
                return new ByteArrayInputStream(new byte[0]);
            }
            return new ByteArrayInputStream(Files.readAllBytes(p));
        } catch (IOException e) {
            throw new RemoteStorageException(e);
        }
    }

    @Override
    public void deleteLogSegmentData(RemoteLogSegmentMetadata m) throws RemoteStorageException {
        try {
            for (String kind : new String[] {"log", "index", "timeindex", "txnindex", "snapshot", "epoch"}) {
                Files.deleteIfExists(file(m, kind));
            }
        } catch (IOException e) {
            throw new RemoteStorageException(e);
        }
    }

    @Override
    public void close() {}
}
