package chatbench

import (
	"os"
	"testing"

	"bothy.example.com/server/cmd/bothybench/internal/benchtest"
)

func TestMain(m *testing.M) { os.Exit(benchtest.Main(m)) }
