package postgres

import "fmt"

// createPartition is built at run time; the PARTITION OF clause ties it to a
// registered table.
func createPartition(name string) string {
	return fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s PARTITION OF sync.event_log FOR VALUES FROM ($1) TO ($2)", name)
}

const catchUp = `SELECT seq FROM sync.event_log WHERE receive_action = 'chat.read' AND seq > $1`
