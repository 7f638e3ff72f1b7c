package domain

// UnreadCount is how many messages of a thread count as unread for a reader (spec 03,
// "Snapshot"): those above both the reader's read position lastRead and the thread's unread
// floor (messages at or below the floor, such as a bulk import, never count), up to the
// thread's newest message last. It is never below 0: a read position may lie beyond last
// when the counters were read before the read state.
func UnreadCount(last, lastRead, floor int64) int64 {
	return max(0, last-max(lastRead, floor))
}
