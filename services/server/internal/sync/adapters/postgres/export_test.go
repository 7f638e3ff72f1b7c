package postgres

// SetBeforeCommit sets the hook that runs in the commit phase once the appender's statements
// are queued, right before the runner sends them with COMMIT, so a test can tell when a writer
// reached that point. Tests that set it run it in a child process of their own; nil removes it.
func SetBeforeCommit(f func()) { beforeCommit = f }

// SlotStart exposes slotStart to the external tests.
var SlotStart = slotStart

// AdmissionStage exposes admissionStage to the external tests.
type AdmissionStage = admissionStage

// The admission stages a probe is told of.
const (
	AdmissionWaiting  = admissionWaiting
	AdmissionAdmitted = admissionAdmitted
	AdmissionReleased = admissionReleased
)

// SetAdmissionProbe makes a tell probe every admission stage of its transactions; set it
// before a's first transaction. The probe runs on the transaction's goroutine and may block
// it, to hold a slot at a chosen point.
func SetAdmissionProbe(a *Appender, probe func(AdmissionStage)) { a.probe = probe }

// SlotsInUse returns how many of a's admission slots are taken.
func SlotsInUse(a *Appender) int { return len(a.slots) }
