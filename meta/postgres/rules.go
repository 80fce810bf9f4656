package postgres

import (
	"context"
	"errors"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
	"github.com/jackc/pgx/v5"
)

// GetRules returns the stored rules document; ENOTFOUND if none was ever stored.
func (s *Store) GetRules(ctx context.Context) ([]byte, error) {
	var doc string
	err := s.pool.QueryRow(ctx, `SELECT document FROM rules WHERE id = 1`).Scan(&doc)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, coffer.Errorf(coffer.ENOTFOUND, "no rules stored")
	}
	return []byte(doc), dbErr(err, "get rules")
}

// PutRules stores the rules document, replacing any previous one.
func (s *Store) PutRules(ctx context.Context, doc []byte) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO rules (id, document, updated_at) VALUES (1, $1, $2)
		ON CONFLICT (id) DO UPDATE SET document = excluded.document, updated_at = excluded.updated_at`,
		string(doc), meta.Now())
	return dbErr(err, "put rules")
}
