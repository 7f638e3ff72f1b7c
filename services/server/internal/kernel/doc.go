// Package kernel is the shared kernel of bothy: the few small packages every
// module may import (configuration, problem errors, the actor and request id
// in the context, HTTP middleware, ids, clock, logging, transactions,
// migrations), so that modules agree on these contracts without depending on
// each other. It holds no business rules; a rule that belongs to one module
// lives in that module.
package kernel
