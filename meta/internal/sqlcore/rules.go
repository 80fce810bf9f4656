package sqlcore

import (
	"context"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
)

// GetRules returns the stored rules document; ENOTFOUND if none was ever stored.
func (s *Store) GetRules(ctx context.Context) ([]byte, error) {
	var doc string
	err := s.db.QueryRow(ctx, `SELECT document FROM rules WHERE tenant_id = ?`, s.tenant).Scan(&doc)
	if IsNoRows(err) {
		return nil, coffer.Errorf(coffer.ENOTFOUND, "no rules stored")
	}
	return []byte(doc), s.err(err, "get rules")
}

// PutRules stores the rules document, replacing any previous one.
func (s *Store) PutRules(ctx context.Context, doc []byte) error {
	_, err := s.db.Write(ctx, `INSERT INTO rules (tenant_id, document, updated_at) VALUES (?, ?, ?)
		ON CONFLICT (tenant_id) DO UPDATE SET document = excluded.document, updated_at = excluded.updated_at`,
		s.tenant, string(doc), s.d.Time(meta.Now()))
	return s.err(err, "put rules")
}
