package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"connectrpc.com/connect"
	"github.com/spf13/cobra"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/coffer/coffer/app"
	"github.com/coffer/coffer/auth"
	"github.com/coffer/coffer/proto/gen/coffer/admin/v1/adminv1connect"
	"github.com/coffer/coffer/rpcapi"
)

// adminConfig is what every `coffer admin` command reads from its flags and env.
type adminConfig struct {
	Server      string
	AdminSecret string
	Token       string
	// PlatformSecret is the platform admin's credential: `tenants` commands send it
	// (and no other credential).
	PlatformSecret string
	Output         string
	Timeout        time.Duration
}

// newAdminCmd returns `coffer admin`: the management API's client (rpcapi, the
// coffer.admin.v1 contract), over the Connect protocol on the server's API port.
func newAdminCmd() *cobra.Command {
	c := &adminConfig{}
	cmd := &cobra.Command{
		Use:   "admin",
		Short: "Manage a running coffer server: buckets, files, rules, webhooks, maintenance, tenants, sites",
		Long: "Manage a running coffer server through its management API (coffer.admin.v1).\n" +
			"Output is a table when stdout is a terminal, JSON otherwise (--output to choose).\n" +
			"Errors are one line on stderr, with exit status 1.",
	}
	fs := cmd.PersistentFlags()
	fs.StringVar(&c.Server, "server", "http://"+app.DefaultConfig().Listen, "URL of the coffer server")
	fs.StringVar(&c.AdminSecret, "admin-secret", "", "admin secret (sent as "+auth.HeaderAdminSecret+")")
	fs.StringVar(&c.Token, "token", "", "a JWT to call as (Authorization: Bearer), instead of the admin secret")
	fs.StringVar(&c.PlatformSecret, "platform-secret", "", "the platform admin's secret, for the tenants commands and audit query --tenant (sent as "+rpcapi.HeaderPlatformSecret+")")
	fs.StringVar(&c.Output, "output", "", "output format: table or json (default: table on a terminal, else json)")
	fs.DurationVar(&c.Timeout, "timeout", 30*time.Second, "time limit of each call")
	bindEnv(fs)
	cmd.PersistentPreRunE = func(*cobra.Command, []string) error {
		if err := applyEnv(fs); err != nil { // the shared flags only: --url is not COFFER_URL
			return err
		}
		return c.check()
	}
	cmd.AddCommand(bucketsCmd(c), filesCmd(c), rulesCmd(c), webhooksCmd(c), opsCmd(c), serverCmd(c), tenantsCmd(c),
		sitesCmd(c), auditCmd(c))
	return cmd
}

// check validates the flags and settles the output format.
func (c *adminConfig) check() error {
	if !strings.HasPrefix(c.Server, "http://") && !strings.HasPrefix(c.Server, "https://") {
		return fmt.Errorf("--server must be an http:// or https:// URL, not %q", c.Server)
	}
	switch c.Output {
	case "":
		c.Output = "json"
		if isTerminal(os.Stdout) {
			c.Output = "table"
		}
	case "table", "json":
	default:
		return fmt.Errorf("--output must be table or json, not %q", c.Output)
	}
	return nil
}

// credentials adds the admin secret or the token to every request.
type credentials struct{ c *adminConfig }

// RoundTrip sends r with the credentials.
func (cr credentials) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if cr.c.AdminSecret != "" {
		r.Header.Set(auth.HeaderAdminSecret, cr.c.AdminSecret)
	}
	if cr.c.Token != "" {
		r.Header.Set(auth.HeaderAuthorization, "Bearer "+cr.c.Token)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// client is the HTTP client of the calls.
func (c *adminConfig) client() *http.Client {
	return &http.Client{Transport: credentials{c}, Timeout: c.Timeout}
}

// base is the server URL without a trailing slash.
func (c *adminConfig) base() string { return strings.TrimRight(c.Server, "/") }

// Clients of each service.
func (c *adminConfig) buckets() adminv1connect.BucketServiceClient {
	return adminv1connect.NewBucketServiceClient(c.client(), c.base())
}
func (c *adminConfig) files() adminv1connect.FileServiceClient {
	return adminv1connect.NewFileServiceClient(c.client(), c.base())
}
func (c *adminConfig) rules() adminv1connect.RuleServiceClient {
	return adminv1connect.NewRuleServiceClient(c.client(), c.base())
}
func (c *adminConfig) webhooks() adminv1connect.WebhookServiceClient {
	return adminv1connect.NewWebhookServiceClient(c.client(), c.base())
}
func (c *adminConfig) ops() adminv1connect.OpsServiceClient {
	return adminv1connect.NewOpsServiceClient(c.client(), c.base())
}
func (c *adminConfig) server() adminv1connect.ServerServiceClient {
	return adminv1connect.NewServerServiceClient(c.client(), c.base())
}

// req wraps a message in a Connect request.
func req[T any](m *T) *connect.Request[T] { return connect.NewRequest(m) }

// callError is a failed call as one line: the code and the server's message, and
// the field a BadRequest detail names if the message does not already; a bare 404
// (a host a multi-tenant server does not serve) says where to look.
func callError(err error) error {
	ce := new(connect.Error)
	if !asConnect(err, &ce) {
		return err
	}
	msg := strings.ReplaceAll(ce.Message(), "\n", " ")
	if msg == "" && ce.Code() == connect.CodeUnimplemented { // an HTTP 404 from something else than the management API
		msg = "no such call at --server (with --tenants: use a host the server serves, e.g. one of --default-tenant-hosts)"
	}
	if f := violationField(ce); f != "" && !strings.Contains(msg, f) {
		msg = f + ": " + msg
	}
	return fmt.Errorf("%s: %s", ce.Code(), msg)
}

// readDocument reads a rules file ("-": standard input), at most 1 MiB.
func readDocument(name string) (string, error) {
	b, err := readInput(name, "a rules document")
	return string(b), err
}

// maxInput bounds a file the admin commands read.
const maxInput = 1 << 20

// readInput reads file name ("-": standard input), at most maxInput bytes; what
// names it in the error past that.
func readInput(name, what string) ([]byte, error) {
	var r io.Reader = os.Stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, maxInput+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxInput {
		return nil, fmt.Errorf("%s: %s is at most 1 MiB", name, what)
	}
	return b, nil
}

// readJSON reads file name as m's protobuf JSON, as readInput does; a field the
// contract does not have is an error, as on the server.
func readJSON(name, what string, m proto.Message) error {
	b, err := readInput(name, what)
	if err != nil {
		return err
	}
	if err := protojson.Unmarshal(b, m); err != nil {
		return fmt.Errorf("%s: %v", name, err)
	}
	return nil
}
