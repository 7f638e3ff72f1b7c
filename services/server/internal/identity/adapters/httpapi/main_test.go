package httpapi_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	identitypg "bothy.example.com/server/internal/identity/adapters/postgres"
	"bothy.example.com/server/internal/pgtest"
)

func TestMain(m *testing.M) {
	code := pgtest.Main(m, identitypg.Migrations())
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "identity httpapi test: leaked goroutines:", err)
			code = 1
		}
	}
	os.Exit(code)
}
