package app

import (
	"container/list"
	gosync "sync"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/authz"
)

// scopeCache is the per-process LRU cache of Scopes by principal. An entry is only returned
// by the caller when its permission version equals the current counter; the cache itself
// knows nothing about versions except that it never replaces a newer entry with an older one.
type scopeCache struct {
	mu    gosync.Mutex
	size  int
	order *list.List // front: most recently used; values are authz.Scope
	byID  map[uuid.UUID]*list.Element
}

func newScopeCache(size int) *scopeCache {
	return &scopeCache{size: size, order: list.New(), byID: make(map[uuid.UUID]*list.Element, min(size, 1024))}
}

// get returns the cached Scope of the principal and marks it used.
func (c *scopeCache) get(principalID uuid.UUID) (authz.Scope, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byID[principalID]
	if !ok {
		return authz.Scope{}, false
	}
	c.order.MoveToFront(e)
	s, ok := e.Value.(authz.Scope) // only put stores values, always an authz.Scope
	return s, ok
}

// put stores s unless the cache holds a Scope of the principal at a higher version (a
// concurrent build that read the counter later), and drops the least recently used entry
// beyond the size.
func (c *scopeCache) put(s authz.Scope) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byID[s.PrincipalID()]; ok {
		if old, _ := e.Value.(authz.Scope); old.PermissionVersion() <= s.PermissionVersion() {
			e.Value = s
		}
		c.order.MoveToFront(e)
		return
	}
	c.byID[s.PrincipalID()] = c.order.PushFront(s)
	for c.order.Len() > c.size {
		last := c.order.Back()
		c.order.Remove(last)
		old, _ := last.Value.(authz.Scope)
		delete(c.byID, old.PrincipalID())
	}
}
