package snapshot

import (
	"os"
	"testing"

	"bothy.example.com/server/internal/e2e/e2etest"
)

func TestMain(m *testing.M) { os.Exit(e2etest.Main(m)) }
