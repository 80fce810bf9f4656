package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
)

// GetRules returns the stored rules document; ENOTFOUND if none was ever stored.
func (s *Store) GetRules(ctx context.Context) ([]byte, error) {
	var doc string
	err := s.db.QueryRowContext(ctx, `SELECT document FROM rules WHERE id = 1`).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, coffer.Errorf(coffer.ENOTFOUND, "no rules stored")
	}
	return []byte(doc), dbErr(err, "get rules")
}

// PutRules stores the rules document, replacing any previous one.
func (s *Store) PutRules(ctx context.Context, doc []byte) error {
	return s.write(ctx, "put rules", func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO rules (id, document, updated_at) VALUES (1, ?, ?)
			ON CONFLICT (id) DO UPDATE SET document = excluded.document, updated_at = excluded.updated_at`,
			string(doc), meta.Now().UnixMicro())
		return err
	})
}
