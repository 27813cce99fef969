// Delegation tokens (KIP-48) with franz-go against a broker with a SASL_PLAINTEXT listener (SCRAM users
// carol and dave) and a PLAINTEXT one: carol creates a token dave may renew, a client logs in with it
// (SCRAM-SHA-256 with tokenauth=true) as carol and produces, a token login may not create tokens, dave
// renews it, carol describes and expires it, and its login fails after. Run by
// tests/integration/test_delegation_tokens.py, which starts the broker (trafka, or Apache Kafka) and gives
// its addresses in TRAFKA_SASL_BOOTSTRAP and TRAFKA_PLAIN_BOOTSTRAP.
package dtoken

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

func env(t *testing.T, name string) string {
	value := os.Getenv(name)
	if value == "" {
		t.Fatalf("%s is not set: run through tests/integration/test_delegation_tokens.py", name)
	}
	return value
}

func client(t *testing.T, bootstrap string, opts ...kgo.Opt) (*kgo.Client, *kadm.Client) {
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(bootstrap), kgo.RequestRetries(3)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl, kadm.NewClient(cl)
}

func user(name, password string) kgo.Opt {
	return kgo.SASL(scram.Auth{User: name, Pass: password}.AsSha512Mechanism())
}

func token(tok kadm.DelegationToken) kgo.Opt {
	return kgo.SASL(scram.Auth{User: tok.TokenID, Pass: base64.StdEncoding.EncodeToString(tok.HMAC), IsToken: true}.AsSha256Mechanism())
}

// eventually retries a check for a while: Kafka's brokers learn tokens (and their renewal and expiry)
// from the metadata log a moment after the controller writes them; trafka has them at once.
func eventually(t *testing.T, what string, check func() error) {
	deadline := time.Now().Add(15 * time.Second)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func TestDelegationTokens(t *testing.T) {
	sasl, plain := env(t, "TRAFKA_SASL_BOOTSTRAP"), env(t, "TRAFKA_PLAIN_BOOTSTRAP")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	_, carol := client(t, sasl, user("carol", "carol-secret"))
	if _, err := carol.CreateTopics(ctx, 1, 1, nil, "dtoken"); err != nil {
		t.Fatalf("create topic: %v", err)
	}
	tok, err := carol.CreateDelegationToken(ctx, kadm.CreateDelegationToken{Renewers: []kadm.Principal{{Name: "dave"}}})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if tok.Owner.Name != "carol" || tok.TokenRequesterPrincipal.Name != "carol" || len(tok.HMAC) != 64 {
		t.Fatalf("created %+v", tok)
	}
	if !tok.ExpiryTimestamp.After(tok.IssueTimestamp) || tok.MaxTimestamp.Before(tok.ExpiryTimestamp) {
		t.Fatalf("timestamps %+v", tok)
	}

	_, anonymous := client(t, plain)
	if _, err := anonymous.CreateDelegationToken(ctx, kadm.CreateDelegationToken{}); !errors.Is(err, kerr.DelegationTokenRequestNotAllowed) {
		t.Fatalf("a token on PLAINTEXT: %v", err)
	}

	eventually(t, "produce with the token", func() error {
		byToken, _ := client(t, sasl, token(tok))
		return byToken.ProduceSync(ctx, &kgo.Record{Topic: "dtoken", Value: []byte("as carol")}).FirstErr()
	})
	_, byTokenAdmin := client(t, sasl, token(tok))
	if _, err := byTokenAdmin.CreateDelegationToken(ctx, kadm.CreateDelegationToken{}); !errors.Is(err, kerr.DelegationTokenRequestNotAllowed) {
		t.Fatalf("a token from a token login: %v", err)
	}

	_, dave := client(t, sasl, user("dave", "dave-secret"))
	eventually(t, "renew by a renewer", func() error {
		renewed, err := dave.RenewDelegationToken(ctx, tok.HMAC, time.Hour)
		if err == nil && !renewed.After(time.Now().Add(50*time.Minute)) {
			return fmt.Errorf("renewed until %v", renewed)
		}
		return err
	})
	eventually(t, "described by the renewer", func() error {
		described, err := dave.DescribeDelegationTokens(ctx)
		if err == nil && (len(described) != 1 || described[0].TokenID != tok.TokenID || described[0].Renewers[0].Name != "dave") {
			return fmt.Errorf("described %+v", described)
		}
		return err
	})

	if _, err := carol.ExpireDelegationToken(ctx, tok.HMAC, -time.Millisecond); err != nil {
		t.Fatalf("expire: %v", err)
	}
	eventually(t, "described after expiry", func() error {
		described, err := carol.DescribeDelegationTokens(ctx)
		if err == nil && len(described) != 0 {
			return fmt.Errorf("described %+v", described)
		}
		return err
	})
	eventually(t, "an expired token refused", func() error {
		after, _ := client(t, sasl, token(tok))
		if after.Ping(ctx) == nil {
			return fmt.Errorf("an expired token logged in")
		}
		return nil
	})
}
