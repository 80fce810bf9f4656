package hasura

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/service"
)

// FileMetadata is the JSON shape of a file (hasura-storage's FileMetadata).
type FileMetadata struct {
	ID               string          `json:"id"`
	Name             string          `json:"name"`
	Size             int64           `json:"size"`
	BucketID         string          `json:"bucketId"`
	ETag             string          `json:"etag"`
	CreatedAt        time.Time       `json:"createdAt"`
	UpdatedAt        time.Time       `json:"updatedAt"`
	IsUploaded       bool            `json:"isUploaded"`
	MimeType         string          `json:"mimeType"`
	UploadedByUserID string          `json:"uploadedByUserId,omitempty"` // hasura-storage omits it when null
	Metadata         json.RawMessage `json:"metadata"`                   // null when there is none
}

func fileJSON(f *coffer.File) FileMetadata {
	md := f.Metadata
	if len(md) == 0 || string(md) == "{}" {
		md = nullJSON
	}
	return FileMetadata{ID: f.ID, Name: f.Name, Size: f.Size, BucketID: f.BucketID, ETag: f.ETag,
		CreatedAt: f.CreatedAt, UpdatedAt: f.UpdatedAt, IsUploaded: f.IsUploaded, MimeType: f.MimeType,
		UploadedByUserID: f.UploadedByUserID, Metadata: md}
}

// each converts a list to its JSON shape with fn, keeping a nil list nil (null).
func each[T, J any](in []*T, fn func(*T) J) []J {
	if in == nil {
		return nil
	}
	out := make([]J, len(in))
	for i, v := range in {
		out[i] = fn(v)
	}
	return out
}

func filesJSON(fs []*coffer.File) []FileMetadata {
	out := make([]FileMetadata, len(fs))
	for i, f := range fs {
		out[i] = fileJSON(f)
	}
	return out
}

// uploadMetaJSON is a "metadata[]" field of an upload, or the "metadata" field of a
// replace (which takes no id). Unknown fields are ignored, as hasura-storage does.
type uploadMetaJSON struct {
	ID       string          `json:"id"`
	Name     string          `json:"name"`
	Metadata json.RawMessage `json:"metadata"`
}

// toMeta is the service's form of m.
func (m uploadMetaJSON) toMeta() service.UploadMeta {
	return service.UploadMeta{ID: m.ID, Name: m.Name, Metadata: m.Metadata}
}

// replaceFile serves PUT /v1/files/{id}: multipart "file" plus optional "metadata"
// JSON {name?, metadata?}. The new contents become visible atomically.
func (h *Handler) replaceFile(w http.ResponseWriter, r *http.Request) {
	mr, release, err := multipartReader(r)
	defer release()
	if err != nil {
		writeError(w, r, coffer.Errorf(coffer.EINVALID, "request must be multipart/form-data: %v", err))
		return
	}
	up, err := h.svc.BeginReplace(r.Context(), principal(r), r.PathValue("id"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	defer up.Abort(r.Context())
	if err := readReplaceParts(r, mr, up); err != nil {
		writeError(w, r, err)
		return
	}
	files, err := up.Commit(r.Context())
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, fileJSON(files[0]))
}

func readReplaceParts(r *http.Request, mr *multipart.Reader, up *service.Upload) error {
	return eachPart(mr, func(part *multipart.Part) error {
		switch part.FormName() {
		case "file", "file[]":
			return up.AddContent(r.Context(), part.FileName(), part.Header.Get("Content-Type"), part, -1)
		case "metadata", "metadata[]":
			return readReplaceMeta(part, up)
		default:
			return discardField(part)
		}
	})
}

func readReplaceMeta(part *multipart.Part, up *service.Upload) error {
	b, err := readField(part)
	if err != nil {
		return err
	}
	var m uploadMetaJSON
	if err := json.Unmarshal([]byte(b), &m); err != nil {
		return coffer.Errorf(coffer.EINVALID, "metadata is not a JSON object {name?, metadata?}")
	}
	return up.SetMeta(0, m.toMeta())
}

func (h *Handler) deleteFile(w http.ResponseWriter, r *http.Request) {
	if err := h.svc.DeleteFile(r.Context(), principal(r), r.PathValue("id")); err != nil {
		writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (h *Handler) getFileMetadata(w http.ResponseWriter, r *http.Request) {
	f, _, err := h.svc.GetFile(r.Context(), principal(r), r.PathValue("id"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, fileJSON(f))
}

type fileUpdateJSON struct {
	Name     *string         `json:"name"`
	Metadata json.RawMessage `json:"metadata"`
}

func (h *Handler) updateFileMetadata(w http.ResponseWriter, r *http.Request) {
	var u fileUpdateJSON
	if err := decodeJSON(r, &u); err != nil {
		writeError(w, r, err)
		return
	}
	f, err := h.svc.UpdateFile(r.Context(), principal(r), r.PathValue("id"), u.Name, u.Metadata)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, fileJSON(f))
}

// decodeJSON reads a JSON body of at most 1 MiB into v, refusing unknown fields.
func decodeJSON(r *http.Request, v any) error {
	dec := json.NewDecoder(io.LimitReader(r.Body, 1<<20))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return coffer.Errorf(coffer.EINVALID, "invalid JSON body: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF { // dec.More misses a stray ']' or '}'
		return coffer.Errorf(coffer.EINVALID, "invalid JSON body: trailing data after the object")
	}
	if raw[0] != '{' {
		return coffer.Errorf(coffer.EINVALID, "invalid JSON body: must be an object")
	}
	strict := json.NewDecoder(bytes.NewReader(raw))
	strict.DisallowUnknownFields()
	if err := strict.Decode(v); err != nil {
		return coffer.Errorf(coffer.EINVALID, "invalid JSON body: %v", err)
	}
	return nil
}
