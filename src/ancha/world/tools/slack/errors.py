"""Slack's Web API errors: one class per error code Slack answers with.

Slack answers almost every failure with HTTP 200 and ``{"ok": false, "error": CODE}``;
handlers raise these and the dispatcher turns them into that body.
"""

from __future__ import annotations

from typing import Any


class SlackError(Exception):
    """A failed call, as Slack reports it."""

    code = "internal_error"
    status = 200

    def __init__(self, *messages: str, **extra: Any) -> None:
        super().__init__(self.code)
        self.messages = list(messages)
        self.extra = extra

    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = {"ok": False, "error": self.code, **self.extra}
        if self.messages:
            body["response_metadata"] = {"messages": self.messages}
        return body


class NotAuthed(SlackError):
    code = "not_authed"


class InvalidAuth(SlackError):
    code = "invalid_auth"


class InvalidArguments(SlackError):
    code = "invalid_arguments"


class InvalidArrayArg(SlackError):
    code = "invalid_array_arg"


class InvalidJson(SlackError):
    code = "invalid_json"


class JsonNotObject(SlackError):
    code = "json_not_object"


class InvalidFormData(SlackError):
    code = "invalid_form_data"


class InvalidPostType(SlackError):
    code = "invalid_post_type"


class MissingPostType(SlackError):
    code = "missing_post_type"


class ChannelNotFound(SlackError):
    code = "channel_not_found"


class NotInChannel(SlackError):
    code = "not_in_channel"


class IsArchived(SlackError):
    code = "is_archived"


class MethodNotSupportedForChannelType(SlackError):
    code = "method_not_supported_for_channel_type"


class ThreadNotFound(SlackError):
    code = "thread_not_found"


class MessageNotFound(SlackError):
    code = "message_not_found"


class CantUpdateMessage(SlackError):
    code = "cant_update_message"


class CantDeleteMessage(SlackError):
    code = "cant_delete_message"


class NoText(SlackError):
    code = "no_text"


class MsgTooLong(SlackError):
    code = "msg_too_long"


class TooManyAttachments(SlackError):
    code = "too_many_attachments"


class InvalidAttachments(SlackError):
    code = "invalid_attachments"


class InvalidBlocks(SlackError):
    code = "invalid_blocks"


class InvalidBlocksFormat(SlackError):
    code = "invalid_blocks_format"


class InvalidCursor(SlackError):
    code = "invalid_cursor"


class InvalidLimit(SlackError):
    code = "invalid_limit"


class InvalidTsLatest(SlackError):
    code = "invalid_ts_latest"


class InvalidTsOldest(SlackError):
    code = "invalid_ts_oldest"


class UserNotFound(SlackError):
    code = "user_not_found"


class UsersNotFound(SlackError):
    code = "users_not_found"


class UsersListNotSupplied(SlackError):
    code = "users_list_not_supplied"


class TooManyUsers(SlackError):
    code = "too_many_users"


class NoItemSpecified(SlackError):
    code = "no_item_specified"


class BadTimestamp(SlackError):
    code = "bad_timestamp"


class InvalidName(SlackError):
    code = "invalid_name"


class AlreadyReacted(SlackError):
    code = "already_reacted"


class NoReaction(SlackError):
    code = "no_reaction"


# --- files, search, views, dnd --------------------------------------------------------


class MethodDeprecated(SlackError):
    code = "method_deprecated"


class MissingArgument(SlackError):
    code = "missing_argument"


class FileUploadSizeRestricted(SlackError):
    code = "file_upload_size_restricted"


class SnippetTooLarge(SlackError):
    code = "snippet_too_large"


class AltTxtTooLarge(SlackError):
    code = "alt_txt_too_large"


class FileNotFound(SlackError):
    code = "file_not_found"


class TooManyIds(SlackError):
    """``files.remote.*`` given both ``file`` and ``external_id``."""

    code = "too_many_ids"


class InvalidExternalId(SlackError):
    code = "invalid_external_id"


class BadTitle(SlackError):
    code = "bad_title"


class BadImage(SlackError):
    """``users.setPhoto``'s ``image`` is no PNG, JPEG or GIF."""

    code = "bad_image"


class TooLarge(SlackError):
    code = "too_large"


class CanvasNotFound(SlackError):
    code = "canvas_not_found"


class ChannelCanvasAlreadyExists(SlackError):
    code = "channel_canvas_already_exists"


class AccessDenied(SlackError):
    code = "access_denied"


class FileDeleted(SlackError):
    code = "file_deleted"


class CantDeleteFile(SlackError):
    code = "cant_delete_file"


class UnknownType(SlackError):
    code = "unknown_type"


class NotAllowedTokenType(SlackError):
    code = "not_allowed_token_type"


class InvalidTriggerId(SlackError):
    code = "invalid_trigger_id"


class ExpiredTriggerId(SlackError):
    code = "expired_trigger_id"


class ExchangedTriggerId(SlackError):
    code = "exchanged_trigger_id"


class ViewTooLarge(SlackError):
    code = "view_too_large"


class NotFound(SlackError):
    code = "not_found"


class HashConflict(SlackError):
    code = "hash_conflict"


class PushLimitReached(SlackError):
    code = "push_limit_reached"


class DuplicateExternalId(SlackError):
    code = "duplicate_external_id"


class CannotParse(SlackError):
    code = "cannot_parse"


class CannotAddBot(SlackError):
    code = "cannot_add_bot"


class CannotAddSlackbot(SlackError):
    code = "cannot_add_slackbot"


class CannotAddOthers(SlackError):
    code = "cannot_add_others"


class CannotCompleteOthers(SlackError):
    code = "cannot_complete_others"


class UserNotInChannel(SlackError):
    code = "user_not_in_channel"


class InvalidTime(SlackError):
    code = "invalid_time"


class TimeInPast(SlackError):
    code = "time_in_past"


class TimeTooFar(SlackError):
    code = "time_too_far"


class InvalidChannel(SlackError):
    code = "invalid_channel"


class InvalidScheduledMessageId(SlackError):
    code = "invalid_scheduled_message_id"


class MessageNotInStreamingState(SlackError):
    code = "message_not_in_streaming_state"


class NameTaken(SlackError):
    code = "name_taken"


class InvalidNameRequired(SlackError):
    code = "invalid_name_required"


class InvalidNamePunctuation(SlackError):
    code = "invalid_name_punctuation"


class InvalidNameMaxlength(SlackError):
    code = "invalid_name_maxlength"


class InvalidNameSpecials(SlackError):
    code = "invalid_name_specials"


class NoUser(SlackError):
    code = "no_user"


class CantInviteSelf(SlackError):
    code = "cant_invite_self"


class AlreadyInChannel(SlackError):
    code = "already_in_channel"


class CantKickSelf(SlackError):
    code = "cant_kick_self"


class CantKickFromGeneral(SlackError):
    code = "cant_kick_from_general"


class CantLeaveGeneral(SlackError):
    code = "cant_leave_general"


class LastMember(SlackError):
    code = "last_member"


class AlreadyArchived(SlackError):
    code = "already_archived"


class NotArchived(SlackError):
    code = "not_archived"


class CantArchiveGeneral(SlackError):
    code = "cant_archive_general"


class TooLong(SlackError):
    code = "too_long"


class InvalidTimestamp(SlackError):
    code = "invalid_timestamp"


class InvalidTypes(SlackError):
    code = "invalid_types"


class InvalidPresence(SlackError):
    code = "invalid_presence"


class InvalidProfile(SlackError):
    code = "invalid_profile"


class NotAdmin(SlackError):
    code = "not_admin"


class CannotUpdateAdminUser(SlackError):
    code = "cannot_update_admin_user"


class ProfileStatusSetFailedNotEmojiSyntax(SlackError):
    code = "profile_status_set_failed_not_emoji_syntax"


class AlreadyPinned(SlackError):
    code = "already_pinned"


class NoPin(SlackError):
    code = "no_pin"


class NotPinnable(SlackError):
    code = "not_pinnable"


class InvalidBookmarkType(SlackError):
    code = "invalid_bookmark_type"


class InvalidLink(SlackError):
    code = "invalid_link"


class InvalidEmoji(SlackError):
    code = "invalid_emoji"


class NameAlreadyExists(SlackError):
    code = "name_already_exists"


class HandleAlreadyExists(SlackError):
    code = "handle_already_exists"


class BadHandle(SlackError):
    code = "bad_handle"


class NameTooLong(SlackError):
    code = "name_too_long"


class DescriptionTooLong(SlackError):
    code = "description_too_long"


class ForbiddenHandle(SlackError):
    code = "forbidden_handle"


class MissingSubteamName(SlackError):
    code = "missing_subteam_name"


class NoSuchSubteam(SlackError):
    code = "no_such_subteam"


class InvalidUsers(SlackError):
    code = "invalid_users"


class InvalidUser(SlackError):
    code = "invalid_user"


class NoUsersProvided(SlackError):
    code = "no_users_provided"


class InvalidChannelProvided(SlackError):
    code = "invalid_channel_provided"


class BotNotFound(SlackError):
    code = "bot_not_found"


class TeamNotFound(SlackError):
    code = "team_not_found"


class Ratelimited(SlackError):
    """Past the method's rate limit (``rate_limits.py``); the answer carries ``Retry-After``."""

    code = "ratelimited"
    status = 429


class UnknownMethod(SlackError):
    code = "unknown_method"


class NotImplementedMethod(SlackError):
    """Not Slack's: the method exists at Slack but this replica lacks it (a coverage gap)."""

    code = "not_implemented"
    status = 501
