package assist

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/uptime-operator/uptime-operator/internal/textutil"
)

// maxReply bounds the endpoint's response body.
const maxReply = 2 << 20

// chatRequest is the body of POST …/chat/completions.
type chatRequest struct {
	Model       string    `json:"model"`
	Messages    []message `json:"messages"`
	Temperature float64   `json:"temperature"`
	MaxTokens   int       `json:"max_tokens"`
	Stream      bool      `json:"stream"`
}

type chatResponse struct {
	Choices []struct {
		Message struct {
			Content string `json:"content"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// endpoint is the chat-completions URL of the configured base.
func (s *Service) endpoint() string {
	u := strings.TrimRight(strings.TrimSpace(s.Config.URL), "/")
	if strings.HasSuffix(u, "/chat/completions") {
		return u
	}
	return u + "/chat/completions"
}

// complete sends msgs and returns the first choice's text.
func (s *Service) complete(ctx context.Context, msgs []message) (string, error) {
	timeout := s.Config.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	maxTokens := s.Config.MaxTokens
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	body, err := json.Marshal(chatRequest{Model: s.Config.Model, Messages: msgs, Temperature: 0.2, MaxTokens: maxTokens})
	if err != nil {
		return "", fmt.Errorf("encode chat request: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.endpoint(), bytes.NewReader(body))
	if err != nil {
		return "", fmt.Errorf("build chat request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if k := strings.TrimSpace(s.Config.APIKey); k != "" {
		req.Header.Set("Authorization", "Bearer "+k)
	}
	hc := s.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		if ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return "", &ProviderError{Msg: "the model did not answer in time"}
		}
		return "", &ProviderError{Msg: redactKey(err.Error(), s.Config.APIKey)}
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxReply))
	if err != nil {
		return "", &ProviderError{StatusCode: resp.StatusCode, Msg: "could not read the response"}
	}
	var cr chatResponse
	decodeErr := json.Unmarshal(raw, &cr)
	if resp.StatusCode/100 != 2 {
		msg := http.StatusText(resp.StatusCode)
		if decodeErr == nil && cr.Error != nil && cr.Error.Message != "" {
			msg = textutil.Truncate(cr.Error.Message, 300)
		}
		return "", &ProviderError{StatusCode: resp.StatusCode, Msg: redactKey(msg, s.Config.APIKey)}
	}
	if decodeErr != nil {
		return "", &ProviderError{StatusCode: resp.StatusCode, Msg: "the response is not a chat completion"}
	}
	if len(cr.Choices) == 0 || strings.TrimSpace(cr.Choices[0].Message.Content) == "" {
		return "", &ProviderError{StatusCode: resp.StatusCode, Msg: "the model returned no text"}
	}
	return strings.TrimSpace(cr.Choices[0].Message.Content), nil
}

// redactKey keeps the API key out of error messages.
func redactKey(msg, key string) string {
	if key = strings.TrimSpace(key); key != "" {
		msg = strings.ReplaceAll(msg, key, "[redacted]")
	}
	return msg
}
