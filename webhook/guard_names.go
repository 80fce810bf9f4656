package webhook

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/coffer/coffer"
)

// metadataHosts are the host names of cloud instance metadata services, refused as
// webhook targets whatever they resolve to and whatever GuardConfig.Allow says: no
// legitimate receiver has one of these names, and the service behind them hands out
// credentials. Their addresses are refused too (specialRanges); the names are
// refused as well so that a resolver answering them differently (a search domain, a
// split-horizon DNS) cannot open a way in. Sources: Google Compute Engine
// (metadata.google.internal, metadata.goog and the bare "metadata" reached through
// the search domain), AWS EC2 (instance-data, under ec2.internal and the regional
// <region>.compute.internal domains), Tencent Cloud (metadata.tencentyun.com).
// Azure, Alibaba Cloud, Oracle Cloud, DigitalOcean, OpenStack and Hetzner publish
// only addresses, which specialRanges lists.
var metadataHosts = map[string]bool{
	"metadata":                   true,
	"metadata.google.internal":   true,
	"metadata.goog":              true,
	"instance-data":              true,
	"instance-data.ec2.internal": true,
	"metadata.tencentyun.com":    true,
}

// isMetadataHost reports whether host (any case, with or without a trailing dot)
// names a cloud metadata service.
func isMetadataHost(host string) bool {
	name := strings.TrimSuffix(strings.ToLower(host), ".")
	if metadataHosts[name] {
		return true
	}
	return strings.HasPrefix(name, "instance-data.") && strings.HasSuffix(name, ".compute.internal")
}

// refuseMetadataHost is the refusal of a metadata service's name, nil for others.
func refuseMetadataHost(host string) error {
	if isMetadataHost(host) {
		return forbiddenHost("%s is a cloud metadata service", strings.ToLower(host))
	}
	return nil
}

// TargetLookupTimeout bounds CheckTarget's resolution of a target's host.
const TargetLookupTimeout = 5 * time.Second

// CheckTarget is CheckURL followed by a resolution of the host, when it is a name,
// with the guard's Resolver: a subscription is created only for a target that
// resolves now, to addresses the guard accepts. It fails closed: a name that does
// not exist (or has no address) is EINVALID, a lookup that fails otherwise (timeout,
// server failure) is EUNAVAILABLE (try again), a refused address is EFORBIDDEN.
// Deliveries check again at every dial (DialContext), as DNS answers change.
func (g *Guard) CheckTarget(ctx context.Context, raw string) error {
	if err := g.CheckURL(raw); err != nil {
		return err
	}
	u, _ := parseTarget(raw) // CheckURL parsed it
	host := u.Hostname()
	if _, err := netip.ParseAddr(host); err == nil {
		return nil // an IP literal, checked by CheckURL (other numeric hosts it refuses)
	}
	ctx, cancel := context.WithTimeout(ctx, TargetLookupTimeout)
	defer cancel()
	_, err := g.resolve(ctx, "tcp", host)
	var dnsErr *net.DNSError
	switch {
	case err == nil || coffer.ErrorCode(err) != coffer.EINTERNAL:
		return err // nil or the guard's own refusal
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		return invalidURL("host %s does not resolve", host)
	}
	return &coffer.Error{Code: coffer.EUNAVAILABLE, Message: "webhook URL: cannot resolve host " + host + " now; try again", Err: err}
}
