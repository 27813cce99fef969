// Exactly-once consume-transform-produce with franz-go's GroupTransactSession against a trafka broker
// (transactions V2 when the broker finalizes transaction.version 2). Run by
// tests/integration/test_franz_go.py, which starts the broker, gives its address in TRAFKA_BOOTSTRAP,
// and restarts it (kill -9) once TRAFKA_PROGRESS shows a third of the records committed. The test then
// holds its open transaction until the harness writes TRAFKA_RESTARTED, so the kill always lands
// mid-transaction, however fast the machine.
package eos

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

const records = 600

func env(t *testing.T, name string) string {
	value := os.Getenv(name)
	if value == "" {
		t.Fatalf("%s is not set: run through tests/integration/test_franz_go.py", name)
	}
	return value
}

func TestExactlyOnceThroughARestart(t *testing.T) {
	bootstrap, progress := env(t, "TRAFKA_BOOTSTRAP"), env(t, "TRAFKA_PROGRESS")
	restarted := env(t, "TRAFKA_RESTARTED")
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	retry := []kgo.Opt{kgo.SeedBrokers(bootstrap), kgo.RetryTimeout(60 * time.Second), kgo.RequestRetries(1000)}

	admin, err := kgo.NewClient(retry...)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	adm := kadm.NewClient(admin)
	if _, err := adm.CreateTopics(ctx, 1, 1, nil, "eos-in", "eos-out"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < records; i++ {
		admin.Produce(ctx, &kgo.Record{Topic: "eos-in", Key: []byte(strconv.Itoa(i)), Value: []byte("v")}, nil)
	}
	if err := admin.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	sess, err := kgo.NewGroupTransactSession(append(retry,
		kgo.TransactionalID("eos-etl"),
		kgo.TransactionTimeout(20*time.Second),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumerGroup("eos-group"),
		kgo.ConsumeTopics("eos-in"),
		kgo.RequireStableFetchOffsets(),
		kgo.FetchMaxPartitionBytes(2000), // small fetches: many transactions
	)...)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	done, held := 0, false
	for done < records {
		if ctx.Err() != nil {
			t.Fatalf("only %d of %d records committed", done, records)
		}
		poll, pollCancel := context.WithTimeout(ctx, 5*time.Second)
		fetches := sess.PollRecords(poll, 50)
		pollCancel()
		if fetches.Empty() {
			continue
		}
		if err := sess.Begin(); err != nil {
			t.Fatal(err)
		}
		n := 0
		fetches.EachRecord(func(r *kgo.Record) {
			n++
			sess.Produce(ctx, &kgo.Record{Topic: "eos-out", Key: r.Key, Value: append(r.Value, '!')}, nil)
		})
		if !held && done >= records/3 { // a third committed: the broker is killed while this one is open
			held = true
			os.WriteFile(progress, []byte(strconv.Itoa(done)), 0o644)
			for ctx.Err() == nil {
				if _, err := os.Stat(restarted); err == nil {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
		committed, err := sess.End(ctx, kgo.TryCommit)
		for err != nil { // the broker went away mid-transaction: abort it and read again
			t.Logf("end: %v (aborting; the group re-reads from its committed offsets)", err)
			if ctx.Err() != nil {
				t.Fatalf("the transaction never ended: %v", err)
			}
			time.Sleep(300 * time.Millisecond)
			committed, err = sess.End(ctx, kgo.TryAbort)
		}
		if committed {
			done += n
			os.WriteFile(progress, []byte(strconv.Itoa(done)), 0o644)
		}
	}

	// Every input record is in eos-out exactly once for read_committed.
	reader, err := kgo.NewClient(append(retry,
		kgo.ConsumeTopics("eos-out"),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
	)...)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	seen := map[string]int{}
	total := 0
	for total < records && ctx.Err() == nil {
		poll, pollCancel := context.WithTimeout(ctx, 5*time.Second)
		reader.PollFetches(poll).EachRecord(func(r *kgo.Record) {
			seen[string(r.Key)]++
			total++
		})
		pollCancel()
	}
	time.Sleep(500 * time.Millisecond) // anything more would be a duplicate
	poll, pollCancel := context.WithTimeout(ctx, 2*time.Second)
	reader.PollFetches(poll).EachRecord(func(r *kgo.Record) { seen[string(r.Key)]++; total++ })
	pollCancel()
	if total != records || len(seen) != records {
		t.Fatalf("read_committed saw %d records of %d distinct keys, want %d exactly once", total, len(seen), records)
	}
	for key, count := range seen {
		if count != 1 {
			t.Fatalf("key %s seen %d times", key, count)
		}
	}

	// Transactions V2: every EndTxn bumped the producer epoch.
	described, err := kadm.NewClient(reader).DescribeTransactions(ctx, "eos-etl") // a client from after the restart
	if err != nil {
		t.Fatal(err)
	}
	txn := described["eos-etl"]
	if txn.ProducerEpoch < 2 {
		t.Fatalf("producer epoch %d after many transactions: EndTxn v5 did not bump it", txn.ProducerEpoch)
	}
	fmt.Printf("committed %d records exactly once; producer epoch now %d\n", records, txn.ProducerEpoch)
}
