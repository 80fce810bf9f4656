package audit_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/coffer/coffer/site/audit"
)

// A site's handler writes one record per request; queries read them back.
func ExampleLog() {
	dir, _ := os.MkdirTemp("", "audit")
	defer os.RemoveAll(dir)
	cfg := audit.DefaultConfig()
	cfg.Dir = dir
	log, err := audit.New(cfg, nil, slog.Default())
	if err != nil {
		panic(err)
	}
	log.Write(&audit.Record{Time: time.Now(), Tenant: "acme", Site: "www", Host: "www.example.com",
		Method: "GET", Path: "/assets/app.js", Status: 200, Cache: "HIT", RequestID: "r1"})
	recs, err := log.Query(context.Background(), audit.Filter{Tenant: "acme", Path: "/assets/**"})
	fmt.Println(len(recs), recs[0].Path, err)
	fmt.Println(log.Close(context.Background()), log.Stats().Written)
	// Output:
	// 1 /assets/app.js <nil>
	// <nil> 1
}
