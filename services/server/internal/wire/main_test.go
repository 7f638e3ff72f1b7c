package wire_test

import (
	"os"
	"testing"

	"bothy.example.com/server/internal/pgtest"
	"bothy.example.com/server/internal/wire"
)

func TestMain(m *testing.M) {
	os.Exit(pgtest.Main(m, wire.Migrations()...))
}
