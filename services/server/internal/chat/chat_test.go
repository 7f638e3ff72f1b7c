package chat_test

import (
	"errors"
	"testing"
	"time"

	"bothy.example.com/server/internal/chat"
	"bothy.example.com/server/internal/kernel/problem"
	"bothy.example.com/server/internal/leaktest"
)

func TestMain(m *testing.M) { leaktest.Main(m) }

func TestMessageRedacted(t *testing.T) {
	t.Parallel()
	if (chat.Message{ContentMD: "hi"}).Redacted() {
		t.Error("a live message reports redacted")
	}
	if !(chat.Message{RedactedAt: time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)}).Redacted() {
		t.Error("a redacted message reports live")
	}
}

func TestErrDuplicateKeyIsAConflict(t *testing.T) {
	t.Parallel()
	if !errors.Is(chat.ErrDuplicateKey, problem.ErrConflict) {
		t.Error("ErrDuplicateKey does not wrap problem.ErrConflict")
	}
}
