package notify

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestSafeURLMasksSecrets(t *testing.T) {
	const uuid = "1f0e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"
	for _, tc := range []struct{ name, raw, want string }{
		{"query token", "http://127.0.0.1:9/hang?token=s3cr3t", "http://127.0.0.1:9/hang"},
		{"user info", "https://bob:pw@example.com/hook", "https://example.com/hook"},
		{"healthchecks uuid", "https://hc-ping.com/" + uuid + "/fail?rid=r1", "https://hc-ping.com/***/fail"},
		{"healthchecks ping key and slug", "https://hc-ping.com/fqOOd6-F4MMNuCEnzTU01w/backup", "https://hc-ping.com/***/backup"},
		{"self-hosted healthchecks", "https://hc.example.com/ping/" + uuid, "https://hc.example.com/ping/***"},
		{"slack", "https://hooks.slack.com/services/T0000/B0000/XXXXXXXXXXXXXXXX", "https://hooks.slack.com/services/***/***/***"},
		{"teams", "https://contoso.webhook.office.com/webhookb2/" + uuid + "@" + uuid + "/IncomingWebhook/abc/" + uuid,
			"https://contoso.webhook.office.com/webhookb2/***/***/***/***"},
		{"discord", "https://discord.com/api/webhooks/123/tok", "https://discord.com/api/webhooks/***/***"},
		{"long token anywhere", "https://example.com/h/a1B2c3D4e5F6g7H8i9J0k1L2m3", "https://example.com/h/***"},
		{"plain path kept", "https://example.com/api/v1/notify", "https://example.com/api/v1/notify"},
		{"unparsable", "http://exa mple.com/x?token=s3cr3t", "http://exa mple.com/***"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := safeURL(tc.raw); got != tc.want {
				t.Errorf("safeURL(%q) = %q, want %q", tc.raw, got, tc.want)
			}
		})
	}
}

// TestSafeErrorOfARealClient: the errors net/http returns for a target
// that times out or refuses quote the whole URL; rebuilt, they keep the
// target's host and what went wrong, and none of its secrets.
func TestSafeErrorOfARealClient(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hang := ln.Addr().String() // accepts (the kernel's backlog), never answers
	defer ln.Close()
	refused, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := refused.Addr().String()
	refused.Close()
	const uuid = "1f0e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"
	for _, raw := range []string{"http://" + hang + "/hook?token=s3cr3tQ", "http://" + closed + "/" + uuid + "/fail?token=s3cr3tQ"} {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, raw, nil)
		_, err := http.DefaultClient.Do(req)
		cancel()
		if err == nil || !strings.Contains(err.Error(), "s3cr3tQ") {
			t.Fatalf("%s: error %v does not quote the URL; the test proves nothing", raw, err)
		}
		safe := safeError(err, raw)
		if msg := safe.Error(); strings.Contains(msg, "s3cr3tQ") || strings.Contains(msg, uuid) || !strings.Contains(msg, "Post http://127.0.0.1:") {
			t.Errorf("safeError = %q, want the target without its secrets", msg)
		}
		if !errors.Is(safe, err) {
			t.Error("safeError does not unwrap to the error")
		}
	}
}
