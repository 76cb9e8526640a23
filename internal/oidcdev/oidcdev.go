// Package oidcdev runs a small OpenID Connect provider on loopback, with a
// username and password form and fixed users, for the single sign-on tests
// of status pages and for `uptime-operator dev --oidc-test-provider`. It is
// zitadel/oidc's OpenID Provider (pkg/op) with the in-memory storage and
// login form of its example server; this package adds users with groups
// (the "groups" claim of their ID tokens) and one web client.
//
// It is not a provider for production: keys live in memory, the login form
// is the example's, and the issuer is plain http.
package oidcdev

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/zitadel/oidc/v3/example/server/exampleop"
	exstorage "github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
	"golang.org/x/text/language"
)

// User is a user of the provider.
type User struct {
	// Username and Password are what the login form asks for.
	Username, Password string
	// Email and EmailVerified are the email and email_verified claims.
	Email         string
	EmailVerified bool
	// Name is the name claim.
	Name string
	// Groups is the groups claim.
	Groups []string
}

// Options configure a provider.
type Options struct {
	// Addr is the listen address; 127.0.0.1:0 when empty.
	Addr string
	// ClientID and ClientSecret are the one web client's; RedirectURIs its
	// registered redirect URIs (http allowed).
	ClientID, ClientSecret string
	RedirectURIs           []string
	// Users sign in with the form.
	Users []User
	// IDTokenLifetime is how long ID tokens are valid; 1 hour when 0.
	IDTokenLifetime time.Duration
	// Wrap, when set, wraps the provider's handler (tests that tamper
	// with its answers).
	Wrap func(http.Handler) http.Handler
}

// Provider is a running provider.
type Provider struct {
	// Issuer is the issuer URL, http://<address>.
	Issuer string
	srv    *http.Server
	done   chan error
}

// Start listens on opts.Addr and serves the provider until Close.
func Start(opts Options) (*Provider, error) {
	if opts.ClientID == "" || len(opts.RedirectURIs) == 0 {
		return nil, errors.New("oidcdev: a client id and a redirect URI are required")
	}
	addr := opts.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen for the OpenID provider: %w", err)
	}
	issuer := "http://" + ln.Addr().String()
	users := userStore{byID: map[string]*exstorage.User{}, groups: map[string]User{}}
	for i, u := range opts.Users {
		id := fmt.Sprintf("user-%d", i+1)
		users.byID[id] = &exstorage.User{ID: id, Username: u.Username, Password: u.Password, FirstName: u.Name,
			Email: u.Email, EmailVerified: u.EmailVerified, PreferredLanguage: language.English}
		users.groups[id] = u
	}
	client := exstorage.WebClient(opts.ClientID, opts.ClientSecret, opts.RedirectURIs...)
	st := &storage{Storage: exstorage.NewStorageWithClients(users, map[string]*exstorage.Client{opts.ClientID: client}),
		users: users.groups, lifetime: opts.IDTokenLifetime}
	var h http.Handler = exampleop.SetupServer(issuer, st, nil, false)
	if opts.Wrap != nil {
		h = opts.Wrap(h)
	}
	p := &Provider{Issuer: issuer, done: make(chan error, 1),
		srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}}
	go func() { p.done <- p.srv.Serve(ln) }()
	return p, nil
}

// Close stops the provider.
func (p *Provider) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := p.srv.Shutdown(ctx)
	if serr := <-p.done; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}

// userStore is the example storage's user store over Options.Users.
type userStore struct {
	byID   map[string]*exstorage.User
	groups map[string]User
}

func (u userStore) GetUserByID(id string) *exstorage.User { return u.byID[id] }

func (u userStore) GetUserByUsername(name string) *exstorage.User {
	for _, x := range u.byID {
		if x.Username == name {
			return x
		}
	}
	return nil
}

// ExampleClientID names the example's JWT-profile service user, which this
// provider does not use.
func (u userStore) ExampleClientID() string { return exstorage.ServiceUserID }

// storage is the example storage with the users' e-mail, name and groups
// in their ID tokens (whatever the scopes: a relying party reads them from
// the ID token) and a chosen ID token lifetime.
type storage struct {
	*exstorage.Storage
	users    map[string]User
	lifetime time.Duration
}

// SetUserinfoFromRequest adds the claims of the ID token.
func (s *storage) SetUserinfoFromRequest(ctx context.Context, info *oidc.UserInfo, req op.IDTokenRequest, scopes []string) error {
	if err := s.Storage.SetUserinfoFromRequest(ctx, info, req, scopes); err != nil {
		return err
	}
	u, ok := s.users[req.GetSubject()]
	if !ok {
		return fmt.Errorf("unknown user %q", req.GetSubject())
	}
	info.Email, info.EmailVerified, info.Name = u.Email, oidc.Bool(u.EmailVerified), u.Name
	if len(u.Groups) > 0 {
		info.AppendClaims("groups", u.Groups)
	}
	return nil
}

// GetClientByClientID returns the client with the chosen ID token lifetime.
func (s *storage) GetClientByClientID(ctx context.Context, id string) (op.Client, error) {
	c, err := s.Storage.GetClientByClientID(ctx, id)
	if err != nil || s.lifetime == 0 {
		return c, err
	}
	return lifetimeClient{Client: c, lifetime: s.lifetime}, nil
}

type lifetimeClient struct {
	op.Client
	lifetime time.Duration
}

func (c lifetimeClient) IDTokenLifetime() time.Duration { return c.lifetime }
