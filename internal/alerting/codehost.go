package alerting

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	monv1 "github.com/uptime-operator/uptime-operator/api/v1alpha1"
	"github.com/uptime-operator/uptime-operator/internal/alertevent"
	"github.com/uptime-operator/uptime-operator/internal/store"
	"github.com/uptime-operator/uptime-operator/internal/textutil"
)

// TimelineCodeHostIssue is the timeline kind that records an issue opened
// for an incident by a code-hosting channel. Its data is a CodeHostIssue; it
// is how a later event of the incident finds the issue to comment on and
// close, per channel.
const TimelineCodeHostIssue = "code_host_issue"

// CodeHostIssue is the data of a code_host_issue timeline event.
type CodeHostIssue struct {
	ChannelID  string `json:"channel_id"`
	Channel    string `json:"channel"`
	Repository string `json:"repository"`
	Number     int    `json:"number"`
	URL        string `json:"url"`
}

// issueBodyLimit bounds the issue-creation response read for its number and
// html_url.
const issueBodyLimit = 1 << 20

// github builds the code-hosting requests of one event: a down event opens
// an issue (or, when the channel already opened one for the incident, as an
// escalation does, comments on it); monitor.up and incident.resolved comment
// on the incident's issue and close it; a test opens an issue.
func (b *requestBuilder) github(ctx context.Context, ch *monv1.AlertChannel, kind string, sum summary, token string) (*outgoing, error) {
	api := strings.TrimRight(b.endpoints.GitHub, "/") + "/repos/" + ch.Spec.Repository + "/issues"
	authorize := func(out *outgoing) *outgoing {
		out.header.Set("Authorization", "Bearer "+token)
		out.header.Set("Accept", "application/vnd.github+json")
		out.header.Set("X-GitHub-Api-Version", "2022-11-28")
		return out
	}
	incidentID := ""
	if kind != alertevent.Test {
		incidentID, _ = sum.Fields["incident_id"].(string)
	}
	var issue *CodeHostIssue
	if incidentID != "" && b.store != nil {
		var err error
		if issue, err = findIssue(ctx, b.store, incidentID, string(ch.UID)); err != nil {
			return nil, err
		}
	}
	comment := func(n int, text string) *outgoing {
		out, _ := jsonPost(api+"/"+strconv.Itoa(n)+"/comments", map[string]string{"body": text})
		return authorize(out)
	}
	switch kind {
	case alertevent.MonitorDown, alertevent.Test:
		if issue != nil {
			return comment(issue.Number, sum.markdown("**")), nil
		}
		out, _ := jsonPost(api, map[string]any{
			"title": textutil.Truncate(sum.Title, 256), "body": sum.markdown("**"), "labels": []string{"incident"},
		})
		if incidentID != "" && b.store != nil {
			out.keepBody = true
			st, at := b.store, b.now
			out.onSuccess = func(ctx context.Context, body []byte) error {
				return recordIssue(ctx, st, ch, incidentID, body, at)
			}
		}
		return authorize(out), nil
	case alertevent.MonitorUp, alertevent.IncidentResolved:
		if issue == nil {
			return &outgoing{skip: true}, nil
		}
		out := comment(issue.Number, sum.markdown("**"))
		closeReq, _ := jsonPost(api+"/"+strconv.Itoa(issue.Number), map[string]string{"state": "closed", "state_reason": "completed"})
		closeReq.method = http.MethodPatch
		out.then = authorize(closeReq)
		return out, nil
	}
	return &outgoing{skip: true}, nil
}

// findIssue returns the issue that channel opened for an incident, nil when
// none was recorded.
func findIssue(ctx context.Context, st timelineStore, incidentID, channelID string) (*CodeHostIssue, error) {
	var found *CodeHostIssue
	err := eachTimeline(ctx, st, incidentID, func(e store.TimelineEvent) {
		if e.Kind != TimelineCodeHostIssue || found != nil {
			return
		}
		var is CodeHostIssue
		if json.Unmarshal(e.Data, &is) == nil && is.ChannelID == channelID && is.Number > 0 {
			found = &is
		}
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return found, err
}

// eachTimeline calls fn with every timeline event of an incident, oldest
// first.
func eachTimeline(ctx context.Context, st timelineStore, incidentID string, fn func(store.TimelineEvent)) error {
	cursor := ""
	for {
		items, next, err := st.ListTimeline(ctx, store.TimelineQuery{IncidentID: incidentID, Cursor: cursor, Limit: 1000})
		if err != nil {
			return fmt.Errorf("list timeline of incident %s: %w", incidentID, err)
		}
		for _, e := range items {
			fn(e)
		}
		if next == "" || len(items) == 0 {
			return nil
		}
		cursor = next
	}
}

// recordIssue links a newly opened issue to its incident: a timeline event
// for the channel, and the incident's issue URL (the REST API's
// code_host_issue_url) unless another channel linked one first.
func recordIssue(ctx context.Context, st issueStore, ch *monv1.AlertChannel, incidentID string, body []byte, at time.Time) error {
	var resp struct {
		Number  int    `json:"number"`
		HTMLURL string `json:"html_url"`
	}
	if err := json.Unmarshal(body, &resp); err != nil || resp.HTMLURL == "" || resp.Number <= 0 {
		return fmt.Errorf("read created issue: the response has no number and html_url")
	}
	inc, err := st.GetIncident(ctx, incidentID)
	if errors.Is(err, store.ErrNotFound) {
		return nil // not an incident of this store (nothing to link)
	}
	if err != nil {
		return fmt.Errorf("get incident %s: %w", incidentID, err)
	}
	data, _ := json.Marshal(CodeHostIssue{ChannelID: string(ch.UID), Channel: ch.Name, Repository: ch.Spec.Repository,
		Number: resp.Number, URL: resp.HTMLURL})
	if _, err := st.AppendTimeline(ctx, store.TimelineEvent{IncidentID: incidentID, Kind: TimelineCodeHostIssue, At: at, Data: data}); err != nil {
		return fmt.Errorf("record issue of incident %s: %w", incidentID, err)
	}
	if inc.IssueURL == "" {
		u := resp.HTMLURL
		if _, err := st.UpdateIncident(ctx, incidentID, store.IncidentUpdate{IssueURL: &u}); err != nil {
			return fmt.Errorf("set issue URL of incident %s: %w", incidentID, err)
		}
	}
	return nil
}
