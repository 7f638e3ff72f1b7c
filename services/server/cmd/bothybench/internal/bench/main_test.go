package bench

import (
	"testing"

	"bothy.example.com/server/internal/leaktest"
)

func TestMain(m *testing.M) { leaktest.Main(m) }
