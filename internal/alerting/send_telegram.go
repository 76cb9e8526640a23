package alerting

import (
	"context"
	"strings"

	"github.com/uptime-operator/uptime-operator/internal/textutil"
)

// telegramSender sends the summary to the channel's chat with the
// channel's bot, else the service's.
var telegramSender = sender{takes: incidentAndRoutedEvents, build: func(ctx context.Context, d *delivery) (*outgoing, error) {
	token := d.endpoints.TelegramBotToken
	if d.ch.Spec.BotTokenFrom != nil {
		var err error
		if token, err = d.secret(ctx, d.ch.Spec.BotTokenFrom, "the bot token"); err != nil {
			return nil, err
		}
	}
	if token == "" {
		return nil, permanent("no Telegram bot token is configured")
	}
	return jsonPost(strings.TrimRight(d.endpoints.Telegram, "/")+"/bot"+token+"/sendMessage", map[string]any{
		"chat_id": d.ch.Spec.ChatID, "text": textutil.Truncate(d.sum.plain(), 4096), "disable_web_page_preview": true,
	})
}}
