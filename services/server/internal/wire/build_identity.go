package wire

import (
	"fmt"

	authzapp "bothy.example.com/server/internal/authz/app"
	identityhttp "bothy.example.com/server/internal/identity/adapters/httpapi"
	identityapp "bothy.example.com/server/internal/identity/app"
)

// buildIdentity builds the identity module: its use cases over its store (whose credential
// read rides with the permission version, batchreads.go), the instance's owners (authz's
// grants, under the owners' lock) and the instance's id, its principal listing and its
// handlers.
func (m *modules) buildIdentity(b base, c identityapp.Config, st stores, authorizer *authzapp.Authorizer) error {
	ids, err := identityapp.New(identityapp.Deps{
		Store:    credentialStore{Store: st.identity, runner: b.runner, instance: b.log.instance},
		Tx:       b.runner,
		Clock:    b.clock,
		Logger:   b.logger,
		Config:   c,
		Appender: b.log.appender,
		Owners:   instanceOwners{store: st.grants},
		Instance: instanceID{store: b.log.instance},
	})
	if err != nil {
		return fmt.Errorf("identity: %w", err)
	}
	listing, err := identityapp.NewListing(st.identity, c.PrincipalsPageSize)
	if err != nil {
		return fmt.Errorf("identity listing: %w", err)
	}
	m.identity = ids
	m.handlers.identity, err = identityhttp.New(identityhttp.Deps{
		Authorizer:     authorizer,
		Principals:     ids,
		Tokens:         ids.Tokens(),
		Devices:        ids.Devices(),
		Listing:        listing,
		TokensPageSize: c.TokensPageSize,
	})
	if err != nil {
		return fmt.Errorf("identity http: %w", err)
	}
	return nil
}
