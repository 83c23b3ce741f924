"""The S3-compatible server the tests use: moto's, which checks the SigV4 signature of every
request in its Authorization header (after its first INITIAL_NO_AUTH_ACTION_COUNT requests),
with what it lacks for presigned URLs: a request signed in its query string (X-Amz-Algorithm,
X-Amz-Credential, X-Amz-Date, X-Amz-Expires, X-Amz-SignedHeaders, X-Amz-Signature) made moto
fail with a 500 (it reads the Authorization header). Here such a request is checked as S3 does:
refused once X-Amz-Date + X-Amz-Expires has passed (403 AccessDenied, "Request has expired"),
refused unless its signature is the one botocore (an independent SigV4 implementation)
computes for the same method, path, host and parameters with the key's secret (403
SignatureDoesNotMatch), then authorised by the key's IAM policies like any request. A request
signed neither way is anonymous: 403 AccessDenied (moto failed with a 500 there too).

    INITIAL_NO_AUTH_ACTION_COUNT=3 python3 Tests/Servers/s3_server.py -H 127.0.0.1 -p 9000
"""
import datetime
import sys
from unittest import mock
from urllib.parse import parse_qs, quote, urlparse

from botocore import auth as botocore_auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from moto import settings
from moto.core.authorization import ActionAuthenticatorMixin
from moto.iam.access_control import CreateAccessKeyFailure, S3IAMRequest, create_access_key
from moto.s3.exceptions import S3AccessDeniedError, S3ClientError
from moto.server import main
from moto.utilities.utils import get_partition

QUERY_AUTH = ["X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Date", "X-Amz-Expires", "X-Amz-SignedHeaders", "X-Amz-Signature"]


class RequestExpired(S3ClientError):
    def __init__(self) -> None:
        super().__init__("AccessDenied", "Request has expired")


class QueryParametersError(S3ClientError):
    def __init__(self, message: str) -> None:
        super().__init__("AuthorizationQueryParametersError", message)


class PresignedS3IAMRequest(S3IAMRequest):
    """An S3IAMRequest whose credential and signature come from the query string."""

    def __init__(self, account_id, method, path, data, body, headers, action, query, host):
        self.account_id = account_id
        self._method, self._path, self._data, self._body, self._headers = method, path, data, body, headers
        self._query, self._host = query, host
        credential = query["X-Amz-Credential"].split("/")
        if len(credential) != 5 or credential[3] != "s3" or credential[4] != "aws4_request":
            raise QueryParametersError("X-Amz-Credential is not <key>/<date>/<region>/s3/aws4_request")
        self._region, self._service = credential[2], credential[3]
        self._action = f"{self._service}:{action[0] if isinstance(action, list) else action}"
        token = query.get("X-Amz-Security-Token")
        try:
            self._access_key = create_access_key(account_id=account_id, partition=get_partition(self._region),
                                                 access_key_id=credential[0],
                                                 headers={**dict(headers), **({"X-Amz-Security-Token": token} if token else {})})
        except CreateAccessKeyFailure as failure:
            self._raise_invalid_access_key(failure.reason)

    def check_signature(self) -> None:
        query = self._query
        if query["X-Amz-Algorithm"] != "AWS4-HMAC-SHA256" or query["X-Amz-SignedHeaders"] != "host":
            raise QueryParametersError("only AWS4-HMAC-SHA256 signing the host header alone is supported here")
        try:
            date = datetime.datetime.strptime(query["X-Amz-Date"], "%Y%m%dT%H%M%SZ")
            expires = int(query["X-Amz-Expires"])
        except ValueError:
            raise QueryParametersError("X-Amz-Date or X-Amz-Expires is malformed")
        if not 1 <= expires <= 604800:
            raise QueryParametersError("X-Amz-Expires must be from 1 to 604800 seconds")
        if datetime.datetime.utcnow() > date + datetime.timedelta(seconds=expires):
            raise RequestExpired()
        # botocore signs the request again from its parts: its own encoding of every parameter.
        credentials = self._access_key.create_credentials()
        signer = botocore_auth.S3SigV4QueryAuth(
            Credentials(credentials.access_key, credentials.secret_key, query.get("X-Amz-Security-Token")),
            "s3", self._region, expires=expires)
        others = [(name, value) for name, value in query.items() if name not in QUERY_AUTH + ["X-Amz-Security-Token"]]
        url = f"http://{self._host}{self._path}"
        if others:
            url += "?" + "&".join(f"{quote(name, safe='-_.~')}={quote(value, safe='-_.~')}" for name, value in others)
        request = AWSRequest(method=self._method, url=url)
        with mock.patch.object(botocore_auth, "get_current_datetime", return_value=date):
            signer.add_auth(request)
        expected = parse_qs(urlparse(request.url).query)["X-Amz-Signature"][0]
        if expected != query["X-Amz-Signature"]:
            self._raise_signature_does_not_match()


original = ActionAuthenticatorMixin._authenticate_and_authorize_action


def authenticate_and_authorize(self, iam_request_cls, resource="*"):
    if (ActionAuthenticatorMixin.request_count < settings.INITIAL_NO_AUTH_ACTION_COUNT
            or iam_request_cls is not S3IAMRequest or "Authorization" in self.headers):
        return original(self, iam_request_cls, resource)
    query = {name: values[0] for name, values in parse_qs(urlparse(self.uri).query, keep_blank_values=True).items()}
    if not any(name in query for name in QUERY_AUTH):
        raise S3AccessDeniedError()
    missing = [name for name in QUERY_AUTH if name not in query]
    if missing:
        raise QueryParametersError("missing " + ", ".join(missing))
    request = PresignedS3IAMRequest(account_id=self.current_account, method=self.method, path=self.raw_path, data=self.data,
                                    body=self.raw_body, headers=self.headers, action=self._get_action(), query=query,
                                    host=self.headers.get("Host", ""))
    request.check_signature()
    request.check_action_permitted(resource)


ActionAuthenticatorMixin._authenticate_and_authorize_action = authenticate_and_authorize

if __name__ == "__main__":
    main(sys.argv[1:])
