package wire

import (
	"fmt"

	authzhttp "bothy.example.com/server/internal/authz/adapters/httpapi"
	authzapp "bothy.example.com/server/internal/authz/app"
)

// buildAuthorizer builds the authz module's Authorizer, which every module's use cases and
// handlers check with, over the grant store, the instance's permission_version and chat's
// store as the channel directory (which channels and spaces exist, which space each channel
// lies in), with its denial counter in the registry. floor is the VersionFloor the grants
// (buildAuthz) raise when a request changes a grant.
func buildAuthorizer(b base, c authzapp.Config, st stores) (*authzapp.Authorizer, *authzapp.VersionFloor, error) {
	floor := &authzapp.VersionFloor{}
	authorizer, err := authzapp.NewAuthorizer(authzapp.AuthorizerDeps{
		Grants:     st.grants,
		Versions:   b.log.instance,
		Directory:  st.chat,
		CacheSize:  c.ScopeCacheSize,
		Logger:     b.logger,
		Registerer: b.registry,
		Floor:      floor,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("authorizer: %w", err)
	}
	return authorizer, floor, nil
}

// buildAuthz builds the authz module's grants (over identity's principals, for grantee
// checks), the owner bootstrap (identity's principals and tokens) and its handlers.
func (m *modules) buildAuthz(b base, c authzapp.Config, st stores, authorizer *authzapp.Authorizer, floor *authzapp.VersionFloor) error {
	grants, err := authzapp.NewGrants(authzapp.GrantsDeps{
		Runner:     b.runner,
		Store:      st.grants,
		Counters:   b.log.instance,
		Appender:   b.log.appender,
		Instance:   b.log.instance,
		Directory:  st.chat,
		Principals: m.identity,
		Authorizer: authorizer,
		PageSize:   c.GrantsPageSize,
		Floor:      floor,
	})
	if err != nil {
		return fmt.Errorf("grants: %w", err)
	}
	bootstrap, err := authzapp.NewBootstrapper(authzapp.BootstrapDeps{
		Runner:     b.runner,
		Store:      st.grants,
		Grants:     grants,
		Principals: m.identity,
		Tokens:     m.identity.Tokens(),
	})
	if err != nil {
		return fmt.Errorf("owner bootstrap: %w", err)
	}
	m.grants, m.bootstrap = grants, bootstrap
	m.handlers.authz, err = authzhttp.New(authzhttp.Deps{Authorizer: authorizer, Grants: grants})
	if err != nil {
		return fmt.Errorf("authz http: %w", err)
	}
	return nil
}
