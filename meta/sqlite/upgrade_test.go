package sqlite

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/coffer/coffer/meta/metatest"
)

// oldRows writes metatest's old rows with the SQL of schema version 5 (before tenants).
var oldRows = fmt.Sprintf(`
INSERT INTO buckets VALUES ('%[1]s', 1, 100, '["image/png"]', 'max-age=1', 30, 1, 0, 1, %[2]d, %[2]d),
    ('default', 1, 50000000, '[]', 'max-age=3600', 30, 1, 0, 0, %[2]d, %[2]d);
INSERT INTO files (id, bucket_id, name, size, mime_type, etag, is_uploaded, uploaded_by_user_id, metadata,
    blob_key, created_at, updated_at, named) VALUES
    ('%[3]s', '%[1]s', 'f', 5, 'text/plain', '"e"', 1, 'u', '{"k":1}', '%[4]s', %[2]d, %[2]d, 0),
    ('%[5]s', 'default', 'n', 7, 'text/plain', '"e"', 1, 'u', '{"k":1}', '%[6]s', %[2]d, %[2]d, 1),
    ('%[7]s', 'default', 'p', 0, 'text/plain', '"e"', 0, 'u', '{"k":1}', '%[8]s', %[2]d, %[2]d, 0);
INSERT INTO upload_intents VALUES ('%[8]s', '%[7]s', %[2]d), ('%[9]s', '', %[2]d);
INSERT INTO rules VALUES (1, '%[10]s', %[2]d);
INSERT INTO webhook_subscriptions VALUES ('%[11]s', '', '', '%[12]s', '%[13]s', %[2]d);
INSERT INTO webhook_events VALUES ('%[14]s', 'file.created', '%[1]s', '%[15]s', %[2]d);
INSERT INTO webhook_deliveries (subscription_id, event_id, event_type, next_at, created_at, updated_at)
    VALUES ('%[11]s', '%[14]s', 'file.created', %[2]d, %[2]d, %[2]d);
INSERT INTO upload_rejections VALUES ('%[16]s', %[2]d, 'default', 'x.exe', '', '', 'user', 'Eicar', 68);`,
	metatest.OldBucket, metatest.OldTime.UnixMicro(), metatest.OldFile, metatest.OldFileKey,
	metatest.OldNamed, metatest.OldNamedKey, metatest.OldPending, metatest.OldPendingKey, metatest.OldIntentKey,
	metatest.OldRules, metatest.OldSub, metatest.OldURL, metatest.OldSecret, metatest.OldEvent,
	metatest.OldPayload, metatest.OldRejection)

// TestTenantsUpgrade migrates a database made at schema version 5 and holding a row
// of every table: every row becomes the default tenant's, unchanged.
func TestTenantsUpgrade(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		t.Fatal(err)
	}
	exec := func(q string, args ...any) error { _, err := db.ExecContext(t.Context(), q, args...); return err }
	metatest.MigrateOld(t, exec, newDialect().MigrationsTable, migrations, 5, metatest.OldTime.UnixMicro())
	if _, err := db.ExecContext(t.Context(), oldRows); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	s := metatest.Open(t, Open, path)
	metatest.Migrated(t, s)
	metatest.CheckTenantsUpgrade(t, s)
}
