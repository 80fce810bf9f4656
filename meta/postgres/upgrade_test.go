package postgres_test

import (
	"fmt"
	"testing"

	"github.com/coffer/coffer/meta/internal/sqlcore"
	"github.com/coffer/coffer/meta/metatest"
	"github.com/coffer/coffer/meta/postgres"
	"github.com/jackc/pgx/v5"
)

// oldRows writes metatest's old rows with the SQL of schema version 8 (before tenants).
var oldRows = fmt.Sprintf(`
INSERT INTO buckets VALUES ('%[1]s', 1, 100, '{image/png}', 'max-age=1', 30, true, false, true, '%[2]s', '%[2]s'),
    ('default', 1, 50000000, '{}', 'max-age=3600', 30, true, false, false, '%[2]s', '%[2]s');
INSERT INTO files (id, bucket_id, name, size, mime_type, etag, is_uploaded, uploaded_by_user_id, metadata,
    blob_key, created_at, updated_at, named) VALUES
    ('%[3]s', '%[1]s', 'f', 5, 'text/plain', '"e"', true, 'u', '{"k":1}', '%[4]s', '%[2]s', '%[2]s', false),
    ('%[5]s', 'default', 'n', 7, 'text/plain', '"e"', true, 'u', '{"k":1}', '%[6]s', '%[2]s', '%[2]s', true),
    ('%[7]s', 'default', 'p', 0, 'text/plain', '"e"', false, 'u', '{"k":1}', '%[8]s', '%[2]s', '%[2]s', false);
INSERT INTO upload_intents VALUES ('%[8]s', '%[7]s', '%[2]s'), ('%[9]s', '', '%[2]s');
INSERT INTO rules VALUES (1, '%[10]s', '%[2]s');
INSERT INTO webhook_subscriptions VALUES ('%[11]s', '', '', '%[12]s', '%[13]s', '%[2]s');
INSERT INTO webhook_events VALUES ('%[14]s', 'file.created', '%[1]s', '%[15]s', '%[2]s');
INSERT INTO webhook_deliveries (subscription_id, event_id, event_type, next_at, created_at, updated_at)
    VALUES ('%[11]s', '%[14]s', 'file.created', '%[2]s', '%[2]s', '%[2]s');
INSERT INTO upload_rejections VALUES ('%[16]s', '%[2]s', 'default', 'x.exe', '', '', 'user', 'Eicar', 68);`,
	metatest.OldBucket, metatest.OldTime.Format("2006-01-02 15:04:05.999999Z07:00"), metatest.OldFile,
	metatest.OldFileKey, metatest.OldNamed, metatest.OldNamedKey, metatest.OldPending, metatest.OldPendingKey,
	metatest.OldIntentKey, metatest.OldRules, metatest.OldSub, metatest.OldURL, metatest.OldSecret,
	metatest.OldEvent, metatest.OldPayload, metatest.OldRejection)

// TestTenantsUpgrade migrates a database made at schema version 8 and holding a row
// of every table: every row becomes the default tenant's, unchanged.
func TestTenantsUpgrade(t *testing.T) {
	u := freshSchema(t, databaseURL(t))
	conn, err := pgx.Connect(t.Context(), u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	exec := func(q string, args ...any) error {
		if len(args) > 0 {
			q = sqlcore.Rebind(q)
		}
		_, err := conn.Exec(t.Context(), q, args...)
		return err
	}
	metatest.MigrateOld(t, exec, postgres.MigrationsTable, postgres.Migrations, 8, metatest.OldTime)
	if err := exec(oldRows); err != nil {
		t.Fatal(err)
	}
	s := open(t, u)
	metatest.Migrated(t, s)
	metatest.CheckTenantsUpgrade(t, s)
}
